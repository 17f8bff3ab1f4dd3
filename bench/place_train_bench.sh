#!/bin/bash
# Placement on real training graphs: the lifetimes and sizes of the planned
# tensors of corpus models (written by `olla-onnx --lifetimes X.csv`, sizes
# rounded to 64 bytes) placed with --align 64. Prints markdown table rows
# with the solver's own wall-clock seconds.
# usage: bench/place_train_bench.sh DIR [time limit] [binary]
#   DIR holds the CSV files; the time limit defaults to 60 s; the binary
#   defaults to a Release build made in build-bench/.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:?usage: bench/place_train_bench.sh DIR [time limit] [binary]}
LIMIT=${2:-60}
BIN=${3:-}
if [ -z "$BIN" ]; then
    cmake -S "$SRC" -B "$SRC/build-bench" -DCMAKE_BUILD_TYPE=Release -DOLLA_BUILD_TESTS=OFF >/dev/null
    cmake --build "$SRC/build-bench" -j2 >/dev/null
    BIN=$SRC/build-bench/olla-onnx
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "| instance | buffers | max live | arena | fragmentation | status | wall s |"
echo "|---|---|---|---|---|---|---|"
for f in "$DIR"/*.csv; do
    "$BIN" place "$f" "$W/out.csv" --align 64 --time-limit "$LIMIT" 2>"$W/err" || true
    line=$(grep '^place: ' "$W/err" | tail -1)
    n=$(echo "$line" | sed -n 's/^place: \([0-9]*\) buffers.*/\1/p')
    live=$(echo "$line" | sed -n 's/.*max live \([0-9]*\) bytes.*/\1/p')
    arena=$(echo "$line" | sed -n 's/.*arena \([0-9]*\) bytes.*/\1/p')
    frag=$(echo "$line" | sed -n 's/.*fragmentation \([0-9.]*\)%.*/\1/p')
    status=$(echo "$line" | sed -n 's/.*lower bound [0-9]*, \([a-z-]*\),.*/\1/p')
    secs=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) s$/\1/p')
    echo "| $(basename "$f" .csv) | $n | $live | $arena | $frag% | $status | $secs |"
done
