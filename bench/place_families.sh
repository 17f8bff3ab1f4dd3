#!/bin/bash
# Placement on every generated instance family, against greedy by size and
# minimalloc in the same run. The families (bench/gen_family.c, from
# tests/unit/place_gen.h): Inception- and DenseNet-style training steps
# (seeds 1-6, batch 1 and 32), compiler-like traces (20,000-60,000
# buffers), and bench/gen_trace.c's training-step traces. For each instance:
# `olla-onnx place --align 1 -v` with the default limit (30 s, a budget of
# 15e9 units; --time-limit 10 for the traces of 20,000 buffers or more);
# greedy by size is the portfolio's "size, first fit" of the same run; then
# minimalloc (--timeout=TIMEOUT, default 30 s) at capacity max live, and,
# when olla-onnx's arena is above it and minimalloc found nothing, at that
# arena: the column gives the capacity it fitted (over max live) and its
# wall seconds in all. Wall and CPU seconds from /usr/bin/time.
# usage: bench/place_families.sh MINIMALLOC [olla-onnx binary] [timeout s]
#   MINIMALLOC: the binary made by bench/build_minimalloc.sh.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
MM=${1:?usage: bench/place_families.sh MINIMALLOC [olla-onnx] [timeout s]}
BIN=${2:-}
TO=${3:-30}
if [ -z "$BIN" ]; then
    . "$SRC/bench/release_binary.sh"
    BIN=$(release_binary "$SRC")
fi
. "$SRC/bench/place_summary.sh"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cc -O2 -I"$SRC" -I"$SRC/include" -o "$W/gen_family" "$SRC/bench/gen_family.c" -lm
cc -O2 -o "$W/gen_trace" "$SRC/bench/gen_trace.c"
echo "| instance | buffers | max live | olla-onnx arena / max live | status, stopped by | work units | olla wall s | olla cpu s | greedy by size / max live | minimalloc fits at (/ max live) | minimalloc wall s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
row() { # name, csv, extra options
    local name=$1 f=$2; shift 2
    /usr/bin/time -f "%e %U %S" -o "$W/time" "$BIN" place "$f" "$W/o.csv" --align 1 -v "$@" 2>"$W/err" || true
    local n live arena status stop work gbs wall user sys
    place_summary "$W/err"
    n=$place_n live=$place_live arena=$place_arena status=$place_status stop=$place_stop work=$place_work
    unit=$place_unit
    gbs=$(sed -n 's/^place: heuristic size, first fit: \([0-9]*\) .*/\1/p' "$W/err" | head -1)
    read -r wall user sys < "$W/time"
    # greedy by size did not run when an earlier heuristic met the bound: use the arena
    local g=$(( ${gbs:-0} * ${unit:-1} )); [ "$g" -gt 0 ] || g=$arena
    # minimalloc decides a capacity: max live first, then olla-onnx's arena if above it
    local marena=0 mwall=0 cap t
    for cap in "$live" "$arena"; do
        [ "$marena" -eq 0 ] || break
        # its own timeout does not cover reading and preparing the input: a
        # hard limit 10 s later
        /usr/bin/time -f "%e" -o "$W/mtime" timeout $((TO + 10)) "$MM" --input="$f" --output="$W/m.csv" \
            --capacity="$cap" --timeout="${TO}s" >/dev/null 2>&1 && marena=$cap
        t=$(tail -1 "$W/mtime")
        mwall=$(echo "$mwall + $t" | bc)
        [ "$arena" -gt "$live" ] || break
    done
    awk -v nm="$name" -v n="$n" -v l="$live" -v a="$arena" -v st="$status" -v sb="$stop" -v wk="$work" \
        -v w="$wall" -v c="$(echo "$user + $sys" | bc)" -v g="$g" -v m="$marena" -v mw="$mwall" \
        'BEGIN { mm = m > 0 ? sprintf("%.5f", m / l) : "none in time";
                 printf "| %s | %s | %s | %.5f | %s, %s | %s | %.2f | %.2f | %.5f | %s | %.2f |\n",
                 nm, n, l, a / l, st, sb, wk, w, c, g / l, mm, mw }'
}
for fam in inception densenet; do
    for seed in 1 2 3 4 5 6; do
        for batch in 1 32; do
            "$W/gen_family" $fam $seed $batch > "$W/t.csv"
            row "$fam $seed batch $batch" "$W/t.csv"
        done
    done
done
for spec in "1 20000" "2 40000" "3 60000"; do
    # shellcheck disable=SC2086
    "$W/gen_family" compiler $spec > "$W/t.csv"
    row "compiler $spec" "$W/t.csv" --time-limit 10
done
for spec in "20000 1 5 1" "40000 4 15 0"; do
    # shellcheck disable=SC2086
    "$W/gen_trace" $spec > "$W/t.csv"
    row "gen_trace $spec" "$W/t.csv" --time-limit 10
done
