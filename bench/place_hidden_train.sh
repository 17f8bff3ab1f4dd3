#!/bin/bash
# Training graphs the corpus does not have: torchvision's GoogLeNet,
# ResNet-50, MnasNet 1.0, Inception v3 and DenseNet-121, one training step
# each at batch 1 and 32, traced by bench/trace_train.py (Debian's
# python3-torch and python3-torchvision; the models are written to DIR once
# and reused), planned end to end with the default budgets
# (`olla-onnx --runtime listed --sharing runtime|none`, default 30 s time
# limit). Prints the planned peak, the arena, the fragmentation
# (arena - peak) / arena, the placement status and seconds, and the total
# seconds from the report.
# usage: bench/place_hidden_train.sh DIR [olla-onnx binary]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:?usage: bench/place_hidden_train.sh DIR [olla-onnx]}
BIN=${2:-}
if [ -z "$BIN" ]; then
    . "$SRC/bench/release_binary.sh"
    BIN=$(release_binary "$SRC")
fi
mkdir -p "$DIR"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "| model | batch | sharing | nodes | planned peak | arena | fragmentation | placement | placement s | total s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in googlenet resnet50 mnasnet1_0 inception_v3 densenet121; do
    for b in 1 32; do
        f="$DIR/${m}_bs$b.onnx"
        [ -s "$f" ] || /usr/bin/python3 "$SRC/bench/trace_train.py" "$m" "$b" "$f" >/dev/null
        for sh in runtime none; do
            "$BIN" -q --runtime listed --sharing "$sh" --report "$W/r.json" "$f" "$W/o.onnx"
            /usr/bin/python3 - "$W/r.json" "$m" "$b" "$sh" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p, a = r["peak_bytes"], r["arena_bytes"]
print("| %s | %s | %s | %d | %d | %d | %.3f%% | %s | %.2f | %.2f |" % (
    sys.argv[2], sys.argv[3], sys.argv[4], r["nodes"], p, a, 100.0 * (a - p) / a,
    r["placement_status"], r["placement_seconds"], r["total_seconds"]))
PY
        done
    done
done
