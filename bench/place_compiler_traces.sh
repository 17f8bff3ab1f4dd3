#!/bin/bash
# Placement of compiler-traced training steps (`bench/gen_family.c traced`:
# saved activations freed out of mirror order, residuals, huge short
# temporaries; 18,700-62,000 buffers, --align 1 as the traces use), and of
# any real traces in REAL_DIR (*.csv), against greedy by size and minimalloc
# in the same run. For each trace:
#   - `olla-onnx place --time-limit 10 -v`: arena / max live, wall and CPU
#     seconds (/usr/bin/time);
#   - `--time-limit 0 --work-limit WORK` (default 5e9, the budget of a 10 s
#     limit): arena / max live and work units, which do not depend on the
#     machine's load (the heuristics before the searches are cut by a count
#     of pairs of buffers, not by the clock);
#   - greedy by size: the portfolio's "size, first fit" of the first run;
#   - minimalloc (--timeout=TIMEOUT, default 10 s) at capacity max live and,
#     when it finds nothing there, at olla-onnx's arena: the capacity it
#     fitted (over max live), or "none in time", and its wall seconds.
# Then the statistics of every trace (bench/trace_stats.py) to compare the
# generated traces with the real ones.
# usage: bench/place_compiler_traces.sh MINIMALLOC [olla-onnx binary] [timeout s] [REAL_DIR] [work units]
#   MINIMALLOC: the binary made by bench/build_minimalloc.sh ("" to skip it).
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
MM=${1?usage: bench/place_compiler_traces.sh MINIMALLOC [olla-onnx] [timeout s] [REAL_DIR] [work units]}
BIN=${2:-}
TO=${3:-10}
REAL=${4:-}
WORK=${5:-5000000001}
if [ -z "$BIN" ]; then
    . "$SRC/bench/release_binary.sh"
    BIN=$(release_binary "$SRC")
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cc -O2 -I"$SRC" -I"$SRC/include" -o "$W/gen" "$SRC/bench/gen_family.c" -lm
# the generated traces: about N buffers, seed, 30% of the saved activations out of mirror order
for spec in "18700 1" "18700 2" "28500 3" "28500 4" "62000 5" "62000 6"; do
    set -- $spec
    "$W/gen" traced "$2" "$1" 30 > "$W/gen_$1_$2.csv"
done
TRACES=("$W"/gen_*.csv)
if [ -n "$REAL" ]; then
    TRACES+=("$REAL"/*.csv)
fi
. "$SRC/bench/place_summary.sh"
echo "| trace | buffers | max live | olla-onnx 10 s: arena / max live | status, stopped by | wall s | cpu s | at $WORK units: arena / max live | work units | greedy by size / max live | minimalloc fits at (/ max live) | minimalloc wall s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for f in "${TRACES[@]}"; do
    name=$(basename "$f" .csv)
    n=$(($(wc -l < "$f") - 1))
    /usr/bin/time -f "%e %U %S" -o "$W/time" "$BIN" place "$f" "$W/o.csv" --align 1 --time-limit 10 -v 2>"$W/err" || true
    place_summary "$W/err"
    live=$place_live arena=$place_arena status=$place_status stop=$place_stop
    read -r wall user sys < "$W/time"
    gbs=$(sed -n 's/^place: heuristic size, first fit: \([0-9]*\) .*/\1/p' "$W/err" | head -1)
    "$BIN" place "$f" "$W/o.csv" --align 1 --time-limit 0 --work-limit "$WORK" -v 2>"$W/err2" || true
    place_summary "$W/err2"
    arena2=$place_arena work2=$place_work
    marena=0 mwall=0
    if [ -n "$MM" ]; then
        for cap in "$live" "$arena"; do
            [ "$marena" -eq 0 ] || break
            # its own timeout does not cover reading the input: a hard limit 10 s later
            /usr/bin/time -f "%e" -o "$W/mtime" timeout $((TO + 10)) "$MM" --input="$f" --output="$W/m.csv" \
                --capacity="$cap" --timeout="${TO}s" >/dev/null 2>&1 && marena=$cap
            mwall=$(echo "$mwall + $(tail -1 "$W/mtime")" | bc)
            [ "$arena" -gt "$live" ] || break
        done
    fi
    awk -v nm="$name" -v n="$n" -v l="$live" -v a="$arena" -v st="$status" -v sb="$stop" -v w="$wall" \
        -v c="$(echo "$user + $sys" | bc)" -v a2="$arena2" -v wk="$work2" -v g="${gbs:-$arena}" -v m="$marena" \
        -v mw="$mwall" -v mm_on="${MM:+1}" \
        'BEGIN { mm = !mm_on ? "not run" : m > 0 ? sprintf("%.5f", m / l) : "none in time";
                 printf "| %s | %s | %s | %.5f | %s, %s | %.2f | %.2f | %.5f | %s | %.5f | %s | %.2f |\n",
                 nm, n, l, a / l, st, sb, w, c, a2 / l, wk, g / l, mm, mw }'
done
echo
/usr/bin/python3 "$SRC/bench/trace_stats.py" "${TRACES[@]}"
