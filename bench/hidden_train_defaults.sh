#!/bin/bash
# Training graphs the corpus does not have (the torchvision models of
# bench/place_hidden_train.sh, traced by bench/trace_train.py into DIR as
# MODEL_bsB.onnx when missing), run with the default options
# (`olla-onnx -q --report r.json M out.onnx`: ONNX Runtime's sharing, its
# listing search) and read back with value_info stripped
# (`olla-onnx shapes --no-value-info`). Prints per model and batch: the
# exit code, the report's warnings and the lines on stderr, the planned
# peak, the arena and the placement status, ONNX Runtime's allocation as
# the tool predicts it for the input order and for the plan, the total
# seconds; then, from inference alone, the tensors left unsized and the
# declared tensors whose inferred shape or element type differs from the
# model's value_info.
# usage: bench/hidden_train_defaults.sh DIR [olla-onnx binary ["" for the
#        release build]] [MODEL ...]   (BATCHES="1 32" by default)
# The wider sample:
#   bench/hidden_train_defaults.sh /tmp/tr/m2 build/olla-onnx $(cat bench/hidden_train_models.txt)
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/train_sample.sh"
train_sample_args "usage: bench/hidden_train_defaults.sh DIR [olla-onnx] [MODEL ...]" "$@"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "| model | batch | nodes | exit | warnings | stderr lines | planned peak | arena | placement | ORT allocated, input order | ORT allocated, plan | total s | unsized without value_info | differing from value_info |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in $MODELS; do
    for b in $BATCHES; do
        f=$(train_step "$m" "$b")
        rc=0
        "$BIN" -q --report "$W/r.json" "$f" "$W/o.onnx" 2>"$W/err" || rc=$?
        "$BIN" shapes --no-value-info "$f" >"$W/s.json" 2>/dev/null || true
        /usr/bin/python3 - "$W" "$f" "$m" "$b" "$rc" <<'PY'
import json, os, sys

import onnx

w, path, model, batch, rc = sys.argv[1:]
r = json.load(open(os.path.join(w, "r.json"))) if rc == "0" else {}
errs = sum(1 for line in open(os.path.join(w, "err")) if line.strip())
try:
    s = json.load(open(os.path.join(w, "s.json")))
    inferred = {t["name"]: t for t in s["tensors"]}
    unsized = str(len(s["unknown"]))
except (OSError, ValueError):
    inferred, unsized = None, "error"
names = {1: "float32", 7: "int64", 9: "bool", 2: "uint8", 11: "float64", 10: "float16", 6: "int32", 3: "int8"}
differ = "-"
if inferred is not None:
    g = onnx.load(path, load_external_data=False).graph
    differ = 0
    for v in list(g.value_info) + list(g.output):
        t = v.type.tensor_type
        x = inferred.get(v.name)
        if not x or x["shape"] != [d.dim_value for d in t.shape.dim] or x["dtype"] != names.get(t.elem_type, "?"):
            differ += 1


def get(k):
    return r.get(k, "-")


print("| %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
    model, batch, get("nodes"), rc, len(r.get("warnings", [])) if r else "-", errs, get("peak_bytes"),
    get("arena_bytes"), get("placement_status"), get("input_ort_allocated_bytes"), get("ort_allocated_bytes"),
    "%.2f" % r["total_seconds"] if r else "-", unsized, differ))
PY
    done
done
