#!/bin/bash
# Placement instances from our own graphs: the lifetimes and sizes of the
# planned tensors of every training graph of the corpus (both batch sizes)
# and of the ONNX Runtime training artifacts (symbolic batch_size bound to 1
# and 32; one instance at its fixed shapes for an artifact without that
# dimension), written by `olla-onnx --lifetimes` (sizes rounded to 64 bytes,
# lifetimes in planned steps of the optimized order).
# usage: bench/place_instances.sh OUT_DIR [corpus dir] [binary]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: bench/place_instances.sh OUT_DIR [corpus dir] [binary]}
CORPUS=${2:-$SRC/../shared/corpus}
BIN=${3:-}
if [ -z "$BIN" ]; then
    . "$SRC/bench/release_binary.sh"
    BIN=$(release_binary "$SRC")
fi
mkdir -p "$OUT"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for f in "$CORPUS"/train/*.onnx; do
    n=$(basename "$f" .onnx)
    "$BIN" -q --time-limit 20 --lifetimes "$OUT/$n.csv" "$f" "$W/out.onnx"
done
for f in "$CORPUS"/ort-training/*.onnx; do
    n=$(basename "$f" .onnx)
    # an artifact without a batch_size dimension (an optimizer model) gives
    # one instance, at its fixed shapes
    if ! "$BIN" -q --time-limit 20 --dim batch_size=1 --lifetimes "$OUT/${n}_bs1.csv" "$f" "$W/out.onnx" 2>"$W/err"; then
        grep -q "has no symbolic dimension named 'batch_size'" "$W/err" || { cat "$W/err" >&2; exit 1; }
        "$BIN" -q --time-limit 20 --lifetimes "$OUT/$n.csv" "$f" "$W/out.onnx"
        continue
    fi
    "$BIN" -q --time-limit 20 --dim batch_size=32 --lifetimes "$OUT/${n}_bs32.csv" "$f" "$W/out.onnx"
done
ls "$OUT"
