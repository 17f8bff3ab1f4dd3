#!/usr/bin/env bash
# End-to-end speed on the corpus's training graphs (train/), default options,
# against a baseline binary in the same run: farm-bench runs the new and the
# baseline command in turn (A B A B ...) and takes the ratio pair by pair.
# Prints a markdown table (medians of RUNS runs), then the median and the
# largest time over the graphs for both.
#
#   bench/corpus_speed.sh BASELINE_BINARY [NEW_BINARY] [RUNS]
#   (defaults: NEW_BINARY build/olla-onnx, RUNS 5)
#
# A baseline from a commit: git archive COMMIT | tar -x -C DIR, then build
# DIR as usual (cmake -S DIR -B DIR/build -DCMAKE_BUILD_TYPE=RelWithDebInfo).
set -uo pipefail
cd "$(dirname "$0")/.."
BASE=$(realpath "${1:?baseline olla-onnx binary}")
NEW=$(realpath "${2:-build/olla-onnx}")
RUNS=${3:-5}
corpus=$(pwd)/../shared/corpus/train
[ -d "$corpus" ] || { echo "no corpus at $corpus"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo "new: $NEW; baseline: $BASE; medians of $RUNS runs each, in turn"
echo
echo "| model | new wall s | new cpu s | baseline wall s | baseline cpu s | wall new/baseline | cpu new/baseline |"
echo "|---|---:|---:|---:|---:|---:|---:|"
: >"$tmp/rows"
for m in "$corpus"/*.onnx; do
  name=$(basename "$m" .onnx)
  fb=$(farm-bench -n "$RUNS" --warmup 1 --timeout 900 --vs "$BASE -q $m $tmp/b.onnx" -- "$NEW" -q "$m" "$tmp/a.onnx" 2>&1)
  get() { echo "$fb" | awk -v w="$1" -v k="$2" '$1 == w && $2 == k {print $5}' | head -1; }
  aw=$(get A wall); ac=$(get A cpu); bw=$(get B wall); bc=$(get B cpu)
  rw=$(echo "$fb" | awk '$1 == "A/B" && $2 == "wall" {print $4}' | head -1)
  rc=$(echo "$fb" | awk '$1 == "A/B" && $2 == "cpu" {print $4}' | head -1)
  echo "| $name | $aw | $ac | $bw | $bc | $rw | $rc |"
  echo "$aw $ac $bw $bc" >>"$tmp/rows"
done
/usr/bin/python3 - "$tmp/rows" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
col = lambda i: [r[i] for r in rows]
print()
for label, i in (("new wall", 0), ("new cpu", 1), ("baseline wall", 2), ("baseline cpu", 3)):
    print(f"{label}: median {statistics.median(col(i)):.2f} s, max {max(col(i)):.2f} s")
PY
