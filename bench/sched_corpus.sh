#!/bin/sh
# Scheduling benchmark over the corpus: converts each training model to the
# text DAG format, checks the input-order peak against the corpus metadata
# (train/*.json pytorch_order_peak_bytes), and schedules every model.
# usage: bench/sched_corpus.sh [time-limit-seconds]   (default 60)
# Needs a release build in build-release (cmake -S . -B build-release
# -DCMAKE_BUILD_TYPE=Release && cmake --build build-release).
set -e
SRC=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${OLLA_CORPUS:-$SRC/../shared/corpus}
LIMIT=${1:-60}
OUT=${TMPDIR:-/tmp}/olla-sched-dags
mkdir -p "$OUT"
BIN=$("$SRC/bench/build_sched_bench.sh")
for f in "$CORPUS"/train/*.onnx "$CORPUS"/ort-training/*.onnx; do
  b=$(basename "$f" .onnx)
  /usr/bin/python3 "$SRC/bench/onnx_to_dag.py" "$f" --dim batch_size=1 > "$OUT/$b.dag"
done
"$BIN" -t "$LIMIT" "$OUT"/*.dag | tee "$OUT/table.md"
echo
echo "input-order peak against train/*.json pytorch_order_peak_bytes:"
for j in "$CORPUS"/train/*.json; do
  b=$(basename "$j" .json)
  want=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pytorch_order_peak_bytes'])" "$j")
  got=$(grep "^| $b.dag " "$OUT/table.md" | awk -F'|' '{gsub(/ /,"",$4); print $4}')
  if [ "$want" = "$got" ]; then echo "  $b: $got ok"; else echo "  $b: MISMATCH ours $got corpus $want"; fi
done
