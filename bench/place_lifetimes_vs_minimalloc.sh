#!/bin/bash
# Placement of training graphs' lifetimes (files written by `olla-onnx
# --lifetimes`, sizes already rounded up to 64 bytes) against minimalloc in the
# same run. Rows of no bytes are dropped first: files written before e55d9cc
# hold them, and minimalloc finds no placement at all for an instance with one,
# at any capacity. For each file:
#   - `olla-onnx place --align 64 -v` with the default limit (30 s, a budget
#     of 15e9 units): arena / max live, status, work units, wall seconds;
#   - minimalloc with its default options (--timeout=TIMEOUT, default 10 s),
#     sizes in units of 64, at capacity max live and, when it finds nothing
#     there and olla-onnx's arena is above max live, at that arena: the
#     capacity it fitted (over max live), "none in time" (its timeout) or
#     "search ended, none at" (it finished without one), and its wall seconds in all.
# usage: bench/place_lifetimes_vs_minimalloc.sh MINIMALLOC OLLA_ONNX TIMEOUT FILE.csv...
#   OLLA_ONNX: "" for a Release build of this checkout; TIMEOUT: "" for 10 s.
#   MINIMALLOC: the binary made by bench/build_minimalloc.sh.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
MM=${1:?usage: bench/place_lifetimes_vs_minimalloc.sh MINIMALLOC OLLA_ONNX TIMEOUT FILE.csv...}
BIN=${2:-}
TO=${3:-10}
[ $# -ge 4 ] || { echo "usage: bench/place_lifetimes_vs_minimalloc.sh MINIMALLOC OLLA_ONNX TIMEOUT FILE.csv..." >&2; exit 2; }
shift 3
if [ -z "$BIN" ]; then
    . "$SRC/bench/release_binary.sh"
    BIN=$(release_binary "$SRC")
fi
. "$SRC/bench/place_summary.sh"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "| lifetimes | buffers (of no bytes) | max live | olla-onnx arena / max live | status | work units | olla wall s | minimalloc fits at (/ max live) | minimalloc wall s |"
echo "|---|---|---|---|---|---|---|---|---|"
for f in "$@"; do
    name=$(basename "$f" .csv)
    zero=$(awk -F, 'NR > 1 && $4 == 0' "$f" | wc -l)
    # bytes for olla-onnx, units of 64 for minimalloc; both without the empty rows
    awk -F, 'NR == 1 { print "id,lower,upper,size"; next } $4 > 0 { print $1 "," $2 "," $3 "," $4 }' "$f" > "$W/b.csv"
    awk -F, 'NR == 1 { print; next } { if ($4 % 64) { print "size not a multiple of 64: " $0 > "/dev/stderr"; exit 1 }
                                      print $1 "," $2 "," $3 "," $4 / 64 }' "$W/b.csv" > "$W/u.csv"
    /usr/bin/time -f "%e" -o "$W/time" "$BIN" place "$W/b.csv" "$W/o.csv" --align 64 -v 2>"$W/err" || true
    place_summary "$W/err"
    n=$place_n live=$place_live arena=$place_arena status=$place_status work=$place_work
    wall=$(tail -1 "$W/time")
    result="none in time" mwall=0
    for cap in "$live" "$arena"; do
        rc=0
        /usr/bin/time -f "%e" -o "$W/mtime" timeout $((TO + 10)) "$MM" --input="$W/u.csv" --output="$W/m.csv" \
            --capacity=$((cap / 64)) --timeout="${TO}s" --validate >"$W/mout" 2>&1 || rc=$?
        mwall=$(echo "$mwall + $(tail -1 "$W/mtime")" | bc)
        if [ $rc -eq 0 ] && grep -q "Validation PASS" "$W/mout"; then
            result=$(awk -v c="$cap" -v l="$live" 'BEGIN { printf "%.5f", c / l }')
            break
        fi
        grep -q "NOT_FOUND" "$W/mout" && result="search ended, none at $(awk -v c="$cap" -v l="$live" 'BEGIN { printf "%.5f", c / l }')"
        [ "$arena" -gt "$live" ] || break
    done
    awk -v nm="$name" -v n="$n" -v z="$zero" -v l="$live" -v a="$arena" -v st="$status" -v wk="$work" \
        -v w="$wall" -v m="$result" -v mw="$mwall" \
        'BEGIN { printf "| %s | %s (%s) | %s | %.5f | %s | %s | %.2f | %s | %.2f |\n", nm, n, z, l, a / l, st, wk, w, m, mw }'
done
