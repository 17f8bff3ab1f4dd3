#!/usr/bin/env bash
# Huge models: wall time and peak memory of olla-onnx on synthetic training
# graphs of growing size (bench/huge_gen.py) and on a model with more than
# 3 GiB of external weights. Prints a markdown table for bench/RESULTS.md.
#
#   bench/huge_bench.sh [OLLA_BINARY] [TIME_LIMIT] [NODES ...]
#   (defaults: build/olla-onnx, 60, 20000 100000 200000)
set -uo pipefail
cd "$(dirname "$0")/.."
OLLA=$(realpath "${1:-build/olla-onnx}")
T=${2:-60}
shift 2 2>/dev/null || shift $#
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(20000 100000 200000)
PY=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/measure.py" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(sys.argv[2:])
wall = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], 'w').write(f"{rc} {wall:.2f} {ru.ru_utime:.2f} {ru.ru_maxrss // 1024}\n")
PY
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo
echo "| model | nodes | file | --time-limit | exit | wall s | user s | peak RSS MiB | report: total s | input-order peak | planned peak | arena | check |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  m=$tmp/train_$n.onnx
  $PY bench/huge_gen.py "$n" "$m" >/dev/null
  nodes=$($PY -c "import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))" "$m")
  size=$(( $(stat -c %s "$m") / 1024 ))
  $PY "$tmp/measure.py" "$tmp/r" "$OLLA" -q --time-limit "$T" --report "$tmp/rep.json" "$m" "$tmp/out.onnx"
  read -r rc wall user rss <"$tmp/r"
  rep=$($PY -c "
import json,sys; r=json.load(open(sys.argv[1]))
print(f\"{r['total_seconds']:.1f} | {r['input_order_peak_bytes']/2**20:.1f} MiB | {r['peak_bytes']/2**20:.1f} MiB | {r['arena_bytes']/2**20:.1f} MiB\")" "$tmp/rep.json" 2>/dev/null || echo "- | - | - | -")
  chk=$("$OLLA" check "$tmp/out.onnx" >/dev/null 2>&1 && echo ok || echo FAILED)
  echo "| train_$n (bench/huge_gen.py $n) | $nodes | ${size} KiB | $T | $rc | $wall | $user | $rss | $rep | $chk |"
  rm -f "$m" "$tmp/out.onnx" "$tmp/rep.json"
done
# more than 3 GiB of weights as external data in a sparse file
mkdir -p "$tmp/in" "$tmp/out"
$PY - "$tmp/in/model.onnx" <<'PY'
import sys
from onnx import helper as h, TensorProto as T
K, M = 32768, 24640
def ext(name, dims, offset, length):
    t = T(name=name, data_type=T.FLOAT, dims=dims, data_location=T.EXTERNAL)
    for k, v in (('location', 'weights.bin'), ('offset', str(offset)), ('length', str(length))):
        e = t.external_data.add(); e.key = k; e.value = v
    return t
nodes = [h.make_node('MatMul', ['x', 'W'], ['mm'], name='mm'), h.make_node('Add', ['mm', 'b'], ['pre'], name='add'),
         h.make_node('Relu', ['pre'], ['y'], name='relu')]
g = h.make_graph(nodes, 'big_weights', [h.make_tensor_value_info('x', T.FLOAT, [4, K])], [h.make_tensor_value_info('y', T.FLOAT, [4, M])],
                 initializer=[ext('W', [K, M], 0, K * M * 4), ext('b', [M], K * M * 4, M * 4)])
m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)]); m.ir_version = 8
open(sys.argv[1], 'wb').write(m.SerializeToString())
PY
wbytes=$((32768 * 24640 * 4 + 24640 * 4))
truncate -s $wbytes "$tmp/in/weights.bin"
$PY "$tmp/measure.py" "$tmp/r" "$OLLA" -q --time-limit "$T" "$tmp/in/model.onnx" "$tmp/out/model.onnx"
read -r rc wall user rss <"$tmp/r"
chk=$("$OLLA" check "$tmp/out/model.onnx" >/dev/null 2>&1 && echo ok || echo FAILED)
echo "| 3 GiB external weights ($((wbytes / 1024 / 1024)) MiB sparse weights.bin, to another folder) | 3 | $(( $(stat -c %s "$tmp/in/model.onnx") )) B | $T | $rc | $wall | $user | $rss | - | - | - | - | $chk |"
echo
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
