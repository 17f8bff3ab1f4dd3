#!/usr/bin/env bash
# The same conversions on a machine as it is and with extra busy loops:
# the written model (md5), the ordering and placement statuses, what stopped
# the ordering, and the arena must not change; only the time may.
#
#   bench/load_bench.sh [BUILD_DIR] [BUSY_LOOPS] [MODEL...]
#       (defaults: build, 3, four training graphs of ../shared/corpus/train)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
loops=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
corpus=$here/../shared/corpus
models=("$@")
[ ${#models[@]} -gt 0 ] || models=("$corpus"/train/resnet18_bs32.onnx "$corpus"/train/alexnet_bs32.onnx
                                   "$corpus"/train/mobilenet_v2_bs1.onnx "$corpus"/train/transformer_bs32.onnx)
out=$(mktemp -d)
trap 'rm -rf "$out"; kill $(jobs -p) 2>/dev/null' EXIT
pass() {
  local tag=$1 m n s e
  for m in "${models[@]}"; do
    n=$(basename "$m" .onnx)
    s=$(date +%s.%N)
    "$build/olla-onnx" -q --report "$out/$n.$tag.json" "$m" "$out/$n.$tag.onnx" || { echo "$n: failed"; continue; }
    e=$(date +%s.%N)
    /usr/bin/python3 - "$out/$n.$tag.json" "$out/$n.$tag.onnx" "$n" "$s" "$e" <<'PY'
import hashlib, json, sys
r = json.load(open(sys.argv[1]))
md5 = hashlib.md5(open(sys.argv[2], "rb").read()).hexdigest()[:12]
print(f"| {sys.argv[3]} | {md5} | {r['schedule_status']} | {r.get('schedule_stopped_by')} | {r['placement_status']} "
      f"| {r['arena_bytes']} | {float(sys.argv[5]) - float(sys.argv[4]):.2f} |")
PY
  done
}
echo "| model | output md5 | order | order stopped by | placement | arena bytes | wall s |"
echo "|---|---|---|---|---|---:|---:|"
echo "| *as is, load $(cut -d' ' -f1 /proc/loadavg)* | | | | | | |"
pass quiet
for _ in $(seq 1 "$loops"); do (while :; do :; done) & done
sleep 2
echo "| *$loops extra busy loops, load $(cut -d' ' -f1 /proc/loadavg)* | | | | | | |"
pass busy
kill $(jobs -p) 2>/dev/null
for m in "${models[@]}"; do
  n=$(basename "$m" .onnx)
  cmp -s "$out/$n.quiet.onnx" "$out/$n.busy.onnx" || echo "DIFFERENT: $n"
done
