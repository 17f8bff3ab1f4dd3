#!/usr/bin/env bash
# One folder of generated models (tests/tools/make_zoo.py) converted on this
# machine two ways: by `olla-onnx batch -j 2`, and by a 4-task Slurm job
# array, one --shard per task, on a one-node cluster started here
# (tests/tools/slurm_cluster.sh; needs root, slurm-wlm and munge). Both
# timed by farm-bench in one call, in turn (ratio array / batch pair by
# pair); then the outputs compared byte for byte, every model counted once
# in the array's merged reports, and a second array run counted unchanged.
# Last, the Python package's overhead on a sample of the same models
# (bench/python_overhead.py, the package built Release in build-bench-python).
#
#   bash bench/slurm_bench.sh [COUNT] [OLLA_BINARY]     (COUNT default 120)
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
COUNT=${1:-120}
PY=/usr/bin/python3
. "$SRC/bench/release_binary.sh"
OLLA=${2:-$(release_binary "$SRC")}
[ -x "$OLLA" ] || { echo "no olla-onnx binary"; exit 1; }
OLLA=$(realpath "$OLLA")
. "$SRC/tests/tools/slurm_cluster.sh"
why=$(slurm_cluster_missing)
[ -z "$why" ] || { echo "cannot start a Slurm cluster here: $why"; exit 1; }
command -v farm-bench >/dev/null || { echo "needs farm-bench"; exit 1; }
tmp=$(mktemp -d); trap 'slurm_cluster_stop; rm -rf "$tmp"' EXIT
$PY "$SRC/tests/tools/make_zoo.py" "$tmp/zoo" "$COUNT" --seed 1
(cd "$tmp/zoo" && find . -name '*.onnx' | sed 's|^\./||' | sort) >"$tmp/models"
slurm_cluster_start "$tmp/slurm" || exit 1
echo "commit $(git -C "$SRC" rev-parse --short HEAD); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary $OLLA"

array() { # OUT REPORT_PREFIX [batch options]: the 4-task array over the zoo
  local out=$1 rep=$2
  shift 2
  sbatch --array=0-3 --wait --chdir="$tmp" --output=/dev/null --wrap \
    "$OLLA batch -q $* --shard \$SLURM_ARRAY_TASK_ID/\$SLURM_ARRAY_TASK_COUNT --report $rep.\$SLURM_ARRAY_TASK_ID.jsonl $tmp/zoo $out"
}
export -f array
export OLLA tmp

echo
echo "== $COUNT models: A = 4-task Slurm array (sbatch --wait), B = batch -j 2; both with --force"
farm-bench -n 3 --timeout 1800 --vs "$OLLA batch -q --force -j 2 --report $tmp/local.jsonl $tmp/zoo $tmp/local_out" \
  -- bash -c "array $tmp/slurm_out $tmp/r --force"

echo
echo "== one more array run (--force), each task's start and end recorded: the work without sbatch --wait's polling"
t0=$(date +%s.%N)
sbatch --array=0-3 --wait --chdir="$tmp" --output=/dev/null --wrap \
  "s=\$(date +%s.%N); $OLLA batch -q --force --shard \$SLURM_ARRAY_TASK_ID/4 $tmp/zoo $tmp/slurm_out; echo \$s \$(date +%s.%N) >$tmp/span.\$SLURM_ARRAY_TASK_ID" >/dev/null
t1=$(date +%s.%N)
cat "$tmp"/span.* | awk -v t0="$t0" -v t1="$t1" '
  NR == 1 || $1 < first {first = $1} NR == 1 || $2 > last {last = $2} {tasks = tasks sprintf(" %.2f", $2 - $1)}
  END {printf "sbatch --wait %.2f s; tasks from the first start to the last end %.2f s (first start %.2f s after submitting); each task:%s s\n", t1 - t0, last - first, first - t0, tasks}'

echo
echo "== the same outputs"
same=0; differ=0
while read -r m; do
  if cmp -s "$tmp/slurm_out/$m" "$tmp/local_out/$m"; then same=$((same + 1)); else differ=$((differ + 1)); fi
done <"$tmp/models"
echo "$same of $(wc -l <"$tmp/models") outputs byte-identical, $differ differ"
cat "$tmp"/r.*.jsonl | $PY -c '
import collections, json, sys
rows = [json.loads(l) for l in sys.stdin]
per = collections.Counter(r["model"] for r in rows)
print("array reports: %d lines, %d models, each %s time(s); statuses %s; stopped by %s" % (
    len(rows), len(per), sorted(set(per.values())), dict(collections.Counter(r["status"] for r in rows)),
    dict(collections.Counter(r.get("schedule_stopped_by") for r in rows))))'
array "$tmp/slurm_out" "$tmp/again" >/dev/null
cat "$tmp"/again.*.jsonl | $PY -c '
import collections, json, sys
print("second array run, no --force:", dict(collections.Counter(json.loads(l)["status"] for l in sys.stdin)))'

echo
echo "== the Python call against the library call, in one process"
B=$SRC/build-bench-python
cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DOLLA_PYTHON=ON -DOLLA_BUILD_TESTS=OFF >/dev/null &&
  cmake --build "$B" -j2 --target olla_python >/dev/null || { echo "cannot build the Python package"; exit 1; }
sample=$(awk 'NR % 4 == 1 {print "'"$tmp/zoo/"'" $0}' "$tmp/models")
PYTHONPATH=$B/python $PY "$SRC/bench/python_overhead.py" --repeat 7 \
  "$SRC/models/mlp_train.onnx" "$SRC/models/cnn_train.onnx" $sample
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
