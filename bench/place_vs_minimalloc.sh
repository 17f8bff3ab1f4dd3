#!/bin/bash
# `olla-onnx place` against minimalloc on minimalloc's challenging instances
# at capacity 1,048,576, timed in the same run by hyperfine (Debian package
# hyperfine): each instance's two commands are timed one after the other in
# one hyperfine call, and the ratio is of their medians. Both outputs are
# checked: olla-onnx validates its own plan (exit 0 only when it fits), and
# minimalloc runs with --validate.
# usage: bench/place_vs_minimalloc.sh DIR MINIMALLOC [olla-onnx binary] [runs]
#   DIR: the X.1048576.csv files (google/minimalloc benchmarks/challenging);
#   MINIMALLOC: the binary made by bench/build_minimalloc.sh;
#   the olla-onnx binary defaults to a Release build in build-bench/.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:?usage: bench/place_vs_minimalloc.sh DIR MINIMALLOC [olla-onnx] [runs]}
MM=${2:?usage: bench/place_vs_minimalloc.sh DIR MINIMALLOC [olla-onnx] [runs]}
BIN=${3:-}
RUNS=${4:-5}
if [ -z "$BIN" ]; then
    . "$SRC/bench/release_binary.sh"
    BIN=$(release_binary "$SRC")
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "| instance | buffers | olla-onnx: fits, status, stopped by | minimalloc: fits | olla-onnx median s | minimalloc median s | ratio olla/minimalloc |"
echo "|---|---|---|---|---|---|---|"
for f in "$DIR"/*.1048576.csv; do
    name=$(basename "$f" .csv)
    ours="$BIN place $f $W/ours.csv --capacity 1048576"
    theirs="$MM --capacity=1048576 --input=$f --output=$W/theirs.csv --validate"
    ofit=no
    $ours 2>"$W/err" && ofit=yes
    line=$(grep '^place: ' "$W/err" | tail -1)
    n=$(echo "$line" | sed -n 's/^place: \([0-9]*\) buffers.*/\1/p')
    status=$(echo "$line" | sed -n 's/.*work units, \([a-z-]*\),.*/\1/p')
    stop=$(echo "$line" | sed -n 's/.*stopped by \([a-z]*\),.*/\1/p')
    mfit=no
    $theirs >/dev/null 2>"$W/merr" && grep -q "Validation PASS" "$W/merr" && mfit=yes
    hyperfine -N --runs "$RUNS" --warmup 0 -i --export-csv "$W/t.csv" "$ours" "$theirs" >/dev/null 2>&1
    a=$(awk -F, 'NR == 2 { print $4 }' "$W/t.csv")
    b=$(awk -F, 'NR == 3 { print $4 }' "$W/t.csv")
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
    printf "| %s | %s | %s, %s, %s | %s | %.3f | %.3f | %s |\n" "$name" "$n" "$ofit" "$status" "$stop" \
        "$mfit" "$a" "$b" "$ratio"
done
