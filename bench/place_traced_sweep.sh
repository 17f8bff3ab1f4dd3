#!/bin/bash
# Placement of many compiler-traced training steps (`bench/gen_family.c
# traced SEED N CROSS`) at a fixed work budget, so the figures do not depend
# on the machine's load: one line per trace (buffers asked, cross percent,
# seed, max live, arena, arena / max live, work units), then per size and
# cross the count above RATIO (default 1.005) and the worst ratio.
# usage: bench/place_traced_sweep.sh [olla-onnx binary] [work units] [ratio] [sizes] [crosses] [seeds]
#   defaults: the release binary, 5000000001 units (the budget of a 10 s
#   limit), 1.005, "18700 28500 40000", "0 30 60", "1 2 3 4 5 6 7 8 9 10 11 12".
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-}
WORK=${2:-5000000001}
RATIO=${3:-1.005}
SIZES=${4:-18700 28500 40000}
CROSSES=${5:-0 30 60}
SEEDS=${6:-1 2 3 4 5 6 7 8 9 10 11 12}
if [ -z "$BIN" ]; then
    . "$SRC/bench/release_binary.sh"
    BIN=$(release_binary "$SRC")
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cc -O2 -I"$SRC" -I"$SRC/include" -o "$W/gen" "$SRC/bench/gen_family.c" -lm
echo "size cross seed max_live arena ratio work_units"
for n in $SIZES; do
    for c in $CROSSES; do
        for s in $SEEDS; do
            "$W/gen" traced "$s" "$n" "$c" > "$W/t.csv"
            "$BIN" place "$W/t.csv" "$W/o.csv" --align 1 --time-limit 0 --work-limit "$WORK" -v 2> "$W/err" || true
            grep '^place: .*max live' "$W/err" | tail -1 |
                sed -n 's/.*max live \([0-9]*\) bytes, arena \([0-9]*\) bytes.* \([0-9]*\) work units.*/\1 \2 \3/p' |
                awk -v n="$n" -v c="$c" -v s="$s" '{ printf "%s %s %s %s %s %.5f %s\n", n, c, s, $1, $2, $2 / $1, $3 }'
        done
    done
done | tee "$W/all"
echo
echo "| size | cross | traces | above $RATIO | worst |"
echo "|---|---|---|---|---|"
awk -v r="$RATIO" '{ k = $1 " | " $2; t[k]++; if ($6 > r) a[k]++; if ($6 > w[k]) w[k] = $6 }
    END { for (k in t) printf "| %s | %d | %d | %.5f |\n", k, t[k], a[k], w[k] }' "$W/all" | sort -n -t'|' -k2 -k3
