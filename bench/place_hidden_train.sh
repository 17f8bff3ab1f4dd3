#!/bin/bash
# Training graphs the corpus does not have: torchvision models (by default
# GoogLeNet, ResNet-50, MnasNet 1.0, Inception v3 and DenseNet-121; or the
# MODEL names given, torchvision.models constructors; BATCHES="1 32" by
# default), one training step each, traced by bench/trace_train.py (Debian's
# python3-torch and python3-torchvision; the models are written to DIR as
# MODEL_bsB.onnx once and reused), planned end to end with the default
# budgets (`olla-onnx --runtime listed --sharing runtime|none`, default 30 s
# time limit). Prints the planned peak, the arena, the fragmentation
# (arena - peak) / arena, the placement status and seconds, and the total
# seconds from the report.
# With LIFETIMES=DIR2 set, each run's lifetimes are written to
# DIR2/MODEL_bsB_SHARING.csv (`olla-onnx place` reads them).
# usage: bench/place_hidden_train.sh DIR [olla-onnx binary ["" for the
#        release build]] [MODEL ...]
# The wider sample:
#   bench/place_hidden_train.sh /tmp/tr/m2 build/olla-onnx $(cat bench/hidden_train_models.txt)
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/train_sample.sh"
train_sample_args "usage: bench/place_hidden_train.sh DIR [olla-onnx] [MODEL ...]" "$@"
[ -z "${LIFETIMES:-}" ] || mkdir -p "$LIFETIMES"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "| model | batch | sharing | nodes | planned peak | arena | fragmentation | placement | placement s | total s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in $MODELS; do
    for b in $BATCHES; do
        f=$(train_step "$m" "$b")
        for sh in runtime none; do
            lt=()
            [ -z "${LIFETIMES:-}" ] || lt=(--lifetimes "$LIFETIMES/${m}_bs${b}_$sh.csv")
            "$BIN" -q --runtime listed --sharing "$sh" --report "$W/r.json" "${lt[@]}" "$f" "$W/o.onnx"
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
