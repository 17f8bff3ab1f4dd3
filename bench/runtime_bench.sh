#!/usr/bin/env bash
# What the runtime runs and allocates: olla-onnx with its defaults (--runtime
# ort, --sharing runtime) on every training graph of the corpus (train/ at each
# batch size, ort-training/) and on infer/ and models/. For each: our peak of
# the order ONNX Runtime executes for the input and for the written model, the
# best order found whoever runs it and its proven lower bound, and what ONNX
# Runtime's planner allocates for the input and the written model (the model of
# passes/runtime/olla_ort_memory.h: tensors and kernel scratch).
#
#   bench/runtime_bench.sh [BUILD_DIR] [TIME_LIMIT]      (defaults: build, 30)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
limit=${2:-30}
corpus=$here/../shared/corpus
# shellcheck source=bench/convert_corpus.sh
. "$here/bench/convert_corpus.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
models=("$corpus"/train/*.onnx "$corpus"/ort-training/*.onnx "$corpus"/infer/*.onnx "$here"/models/*.onnx)
# batch 32 (1 for infer/ and models/), where the model declares the name
bindings() { case "$1" in infer/*|models/*) echo batch=1 batch_size=1 seq=8 ;; *) echo batch=32 batch_size=32 seq=8 ;; esac; }
convert_corpus "$out" "$build" "$limit" bindings "${models[@]}"
/usr/bin/python3 - "$out" "$limit" "$here" <<'PY'
import os, statistics, sys
sys.path.insert(0, os.path.join(sys.argv[3], "bench"))
from reports import load_reports
out, limit = sys.argv[1], sys.argv[2]
rows = load_reports(out)
def mb(b): return "n/a" if b is None or b < 0 else f"{b / 1e6:.2f}"
print(f"Time limit {limit} s; batch 32 for train/ and ort-training/, 1 for infer/ and models/; sizes rounded to 64 bytes.\n")
print("| model | ORT runs input: peak MB | ORT runs written: peak MB | best order MB | lower bound MB | written above bound "
      "| ORT allocates, input MB | ORT allocates, written MB | change | listing | s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
worse_peak, worse_ort = [], []
for r in rows:
    if "error" in r:
        print(f"| {r['name']} | failed: {r['error']} ||||||||||"); continue
    lb, pk = r["lower_bound_bytes"], r["executed_peak_bytes"]
    gap = f"{100 * (pk / lb - 1):.2f}%" if lb else "n/a"
    oi, oo = r["input_ort_allocated_bytes"], r["ort_allocated_bytes"]
    ch = f"{100 * (oo / oi - 1):+.1f}%" if oi and oo and oi > 0 else "n/a"
    if pk > r["input_executed_peak_bytes"]: worse_peak.append(r["name"])
    if oi is not None and oo is not None and oo > oi: worse_ort.append(r["name"])
    print(f"| {r['name']} | {mb(r['input_executed_peak_bytes'])} | {mb(pk)} | {mb(r['unconstrained_peak_bytes'])} | {mb(lb)} | "
          f"{gap} | {mb(oi)} | {mb(oo)} | {ch} | {r['runtime_search']} | {r['total_seconds']:.2f} |")
ok = [r for r in rows if "error" not in r]
print()
print(f"Written model's executed peak above the input's: {len(worse_peak)} {worse_peak}")
print(f"ORT allocating more for the written model than for the input: {len(worse_ort)} {worse_ort}")
train = [r for r in ok if r["name"].startswith(("train/", "ort-training/"))]
at = [r for r in train if r["executed_peak_bytes"] <= 1.001 * r["lower_bound_bytes"]]
print(f"Training graphs whose executed order is within 0.1% of the proven bound: {len(at)} of {len(train)}")
red = [1 - r["ort_allocated_bytes"] / r["input_ort_allocated_bytes"] for r in train if r["input_ort_allocated_bytes"]]
if red: print(f"Training graphs: ORT allocation {100 * statistics.mean(red):.1f}% lower on average (largest {100 * max(red):.1f}%)")
print(f"Median end to end on the training graphs {statistics.median(r['total_seconds'] for r in train):.2f} s, max {max(r['total_seconds'] for r in train):.2f} s")
print(f"Load average at the end of the run: {open('/proc/loadavg').read().split()[:3]}")
PY
