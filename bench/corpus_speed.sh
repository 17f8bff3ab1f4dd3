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
#
# A binary that does not exist (or cannot run) is refused with exit 2, as is
# a missing farm-bench: without them every row would come out empty.
set -uo pipefail
usage() { echo "usage: bench/corpus_speed.sh BASELINE_BINARY [NEW_BINARY] [RUNS]" >&2; exit 2; }
[ $# -ge 1 ] && [ -n "$1" ] || usage
# the paths given are the caller's; the default NEW is the checkout's
here=$(cd "$(dirname "$0")/.." && pwd)
BASE=$(realpath -m -- "$1")
NEW=$(realpath -m -- "${2:-$here/build/olla-onnx}")
RUNS=${3:-5}
for pair in "baseline:$BASE" "new:$NEW"; do
  what=${pair%%:*} bin=${pair#*:}
  if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
    echo "corpus_speed: the $what binary $bin does not exist or is not executable; build it first (the header of bench/corpus_speed.sh says how)" >&2
    exit 2
  fi
done
command -v farm-bench >/dev/null || { echo "corpus_speed: farm-bench is not on PATH" >&2; exit 2; }
cd "$here"
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
