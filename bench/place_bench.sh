#!/bin/bash
# Placement benchmark: every minimalloc instance of the corpus and a
# generated 60,000-buffer trace. Prints markdown table rows: the solver's
# wall-clock seconds, the process CPU seconds (user + system, both threads)
# from /usr/bin/time, and the online caching allocator's reservation.
# usage: bench/place_bench.sh [corpus dir] [binary]
#   corpus dir defaults to ../shared/corpus next to the source tree;
#   binary defaults to a Release build made in build-bench/.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${1:-$SRC/../shared/corpus}
BIN=${2:-}
if [ -z "$BIN" ]; then
    . "$SRC/bench/release_binary.sh"
    BIN=$(release_binary "$SRC")
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

field() { sed -n "s/.* $1 \([0-9.]*\)[ %].*/\1/p" "$W/err" | head -1; }
row() { # name file args...
    local name=$1 f=$2; shift 2
    local rc=0
    /usr/bin/time -f "cpu %U %S" -o "$W/time" "$BIN" place "$f" "$W/out.csv" "$@" 2>"$W/err" || rc=$?
    local cpu; cpu=$(awk '{ printf "%.2f", $2 + $3 }' "$W/time")
    "$BIN" place "$f" "$W/out2.csv" --time-limit 0.001 --online 2>"$W/err2" || true
    local line; line=$(grep '^place: ' "$W/err" | tail -1)
    local n; n=$(echo "$line" | sed -n 's/^place: \([0-9]*\) buffers.*/\1/p')
    local live; live=$(echo "$line" | sed -n 's/.*max live \([0-9]*\) bytes.*/\1/p')
    local arena; arena=$(echo "$line" | sed -n 's/.*arena \([0-9]*\) bytes.*/\1/p')
    local lb; lb=$(echo "$line" | sed -n 's/.*lower bound \([0-9]*\),.*/\1/p')
    local status; status=$(echo "$line" | sed -n 's/.*work units, \([a-z-]*\),.*/\1/p')
    local secs; secs=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) s$/\1/p')
    local gap; gap=$(echo "$line" | sed -n 's/.*fragmentation \([0-9.]*\)%.*/\1/p')
    local online; online=$(sed -n 's/.*reserved \([0-9]*\) bytes (\([0-9.]*\)%.*/\1 (+\2%)/p' "$W/err2")
    local fits="-"
    case "$*" in *--capacity*) [ $rc -eq 0 ] && fits=yes || fits=no ;; esac
    echo "| $name | $* | $n | $live | $arena | $lb | $gap% | $status | $fits | $secs | $cpu | $online |"
}

echo "| instance | options | buffers | max live | arena | lower bound | gap to max live | status | fits | wall s | cpu s | online caching allocator reserved |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for x in A B C D E; do
    row "$x.1048576" "$CORPUS/minimalloc/$x.1048576.csv" --capacity 1048576 --time-limit 60
done
for x in A B C D E; do
    row "$x.1048576" "$CORPUS/minimalloc/$x.1048576.csv" --time-limit 10
done
for f in G_1 resnet50; do
    row "$f" "$CORPUS/minimalloc/$f.csv" --time-limit 30
done
for f in "$CORPUS"/minimalloc/[a-z]*.[0-9]*.csv; do
    row "$(basename "$f" .csv)" "$f" --time-limit 10
done
cc -O2 -o "$W/gen_trace" "$SRC/bench/gen_trace.c"
"$W/gen_trace" 60000 > "$W/trace60k.csv"
row "generated 60,000 (gen_trace 60000)" "$W/trace60k.csv" --time-limit 10 --align 256
"$W/gen_trace" 60000 7 > "$W/trace60k7.csv"
row "generated 60,000 (gen_trace 60000 7)" "$W/trace60k7.csv" --time-limit 10 --align 256
