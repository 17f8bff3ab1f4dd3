#!/bin/bash
# Placement of many lifetimes files (written by `olla-onnx --lifetimes`, e.g.
# through bench/place_hidden_train.sh with LIFETIMES=DIR) and of the
# generated Inception- and DenseNet-style training steps (bench/gen_family.c,
# seeds 1-40 at batch 1 and 32), each with the default work budget and no
# deadline, so every figure but the seconds is the same on a busy machine.
# One line per instance: name, fragmentation %, what stopped it, work units,
# status, user seconds, and the first 8 hex digits of the placement's MD5
# (two builds that place an instance the same way print the same digits).
#
#   bench/place_lifetimes.sh BIN OUT.tsv [LIFETIMES_DIR ...]
#
# Then, for two builds: join -t$'\t' <(sort A.tsv) <(sort B.tsv) lists each
# instance side by side.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=$1
OUT=$2
shift 2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cc -O2 -I"$SRC" -I"$SRC/include" -o "$W/gen" "$SRC/bench/gen_family.c" -lm
: > "$OUT"

# place NAME CSV: one line of OUT
place() {
    /usr/bin/time -f "%U" -o "$W/t" "$BIN" place "$2" "$W/o.csv" --align 64 --work-limit 15000000000 --time-limit 0 \
        -v 2> "$W/log" > /dev/null || true
    local fields
    fields=$(grep '^place: [0-9]* buffers, max' "$W/log" |
        sed -n 's/.*fragmentation \([0-9.]*\)%.*stopped by \([a-z]*\), \([0-9]*\) work units, \([a-z]*\).*/\1\t\2\t\3\t\4/p')
    printf '%s\t%s\t%s\t%s\n' "$1" "$fields" "$(tail -1 "$W/t")" "$(md5sum < "$W/o.csv" | cut -c1-8)" >> "$OUT"
}

for dir in "$@"; do
    for f in "$dir"/*.csv; do
        [ -f "$f" ] || continue
        place "$(basename "$dir")/$(basename "$f")" "$f"
    done
done
for fam in inception densenet; do
    for seed in $(seq 1 40); do
        for b in 1 32; do
            "$W/gen" "$fam" "$seed" "$b" > "$W/g.csv"
            place "gen/$fam.$seed.$b" "$W/g.csv"
        done
    done
done
awk -F'\t' '{ u += $4; if ($2 + 0 == 0) z++ } END { printf "%d instances, %d at max live, %.4g work units\n", NR, z, u }' "$OUT"
