#!/bin/bash
# Placement on real training graphs: the instances written by
# bench/place_instances.sh, placed with --align 64 and the default time
# limit (30 s, so a work budget of 15e9 units). Prints markdown table rows
# with the placer's own wall-clock seconds, then the median and the maximum.
# usage: bench/place_train_bench.sh DIR [binary]
#   DIR holds the CSV files; the binary defaults to a Release build made in
#   build-bench/.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:?usage: bench/place_train_bench.sh DIR [binary]}
BIN=${2:-}
if [ -z "$BIN" ]; then
    . "$SRC/bench/release_binary.sh"
    BIN=$(release_binary "$SRC")
fi
. "$SRC/bench/place_summary.sh"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "| instance | buffers | max live | best heuristic | arena | fragmentation | status | stopped by | work units | wall s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for f in "$DIR"/*.csv; do
    "$BIN" place "$f" "$W/out.csv" --align 64 2>"$W/err" || true
    place_summary "$W/err"
    n=$place_n live=$place_live arena=$place_arena status=$place_status stop=$place_stop work=$place_work
    line=$(grep '^place: .*max live' "$W/err" | tail -1)
    heur=$(echo "$line" | sed -n 's/.*best heuristic \([0-9]*\),.*/\1/p')
    frag=$(echo "$line" | sed -n 's/.*fragmentation \([0-9.]*\)%.*/\1/p')
    secs=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) s$/\1/p')
    echo "$secs" >> "$W/secs"
    echo "| $(basename "$f" .csv) | $n | $live | $heur | $arena | $frag% | $status | $stop | $work | $secs |"
done
sort -g "$W/secs" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
    printf "\nwall seconds over %d instances: median %.3f, max %.3f\n", NR, m, v[NR] }'
