#!/usr/bin/env bash
# Planning in the runtime's memory model (buffer sharing): olla-onnx --report
# on every training graph of the corpus (train/ at each batch size,
# ort-training/), every inference graph (infer/, batch 1) and models/. For
# each: the input order's peak without sharing, with the runtime's sharing
# (what the runtime itself needs, no reordering), the planned arena under
# sharing, its lower bound, the statuses and the time; then the savings.
#
#   bench/sharing_bench.sh [BUILD_DIR] [TIME_LIMIT]      (defaults: build, 30)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
limit=${2:-30}
corpus=$here/../shared/corpus
# shellcheck source=bench/convert_corpus.sh
. "$here/bench/convert_corpus.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
models=("$corpus"/train/*.onnx "$corpus"/infer/*.onnx "$corpus"/ort-training/*.onnx "$here"/models/*.onnx)
# batch 1 (infer/), 8 elsewhere, where the model declares the name
bindings() { case "$1" in infer/*) echo batch=1 batch_size=1 seq=8 ;; *) echo batch=8 batch_size=8 seq=8 ;; esac; }
convert_corpus "$out" "$build" "$limit" bindings "${models[@]}"
/usr/bin/python3 - "$out" "$limit" "$here" <<'PY'
import os, statistics, sys
sys.path.insert(0, os.path.join(sys.argv[3], "bench"))
from reports import load_reports, mib
out, limit = sys.argv[1], sys.argv[2]
rows = load_reports(out)
print(f"Time limit {limit} s per model; batch 1 for infer/, 8 for other symbolic batches; sizes rounded to 64 bytes.\n")
print("| model | nodes | views | in place | input peak, no sharing MiB | input peak, sharing MiB | arena MiB | lower bound MiB "
      "| saving vs sharing input | saving vs no-sharing input | order | placement | s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|")
bad = []
for r in rows:
    if "error" in r:
        print(f"| {r['name']} | failed: {r['error']} ||||||||||||"); continue
    shin, plain, arena, lb = r["input_order_shared_peak_bytes"], r["input_order_peak_bytes"], r["arena_bytes"], r["lower_bound_bytes"]
    r["sav_shared"] = 100 * (1 - arena / shin) if shin else 0.0
    r["sav_plain"] = 100 * (1 - arena / plain) if plain else 0.0
    if arena > shin:
        bad.append(r["name"])
    print(f"| {r['name']} | {r['nodes']} | {r['views']} | {r['inplace']} | {mib(plain)} | {mib(shin)} | {mib(arena)} | "
          f"{mib(lb) if lb is not None else 'n/a'} | {r['sav_shared']:.1f}% | {r['sav_plain']:.1f}% | "
          f"{r['schedule_status']} | {r['placement_status']} | {r['total_seconds']:.2f} |")
ok = [r for r in rows if "error" not in r]
print()
print(f"Arena above the sharing-aware input-order peak: {len(bad)} models {bad if bad else ''}")
for group, test in (("train/*_bs1", lambda n: n.startswith("train/") and n.endswith("_bs1")),
                    ("train/*_bs32", lambda n: n.startswith("train/") and n.endswith("_bs32")),
                    ("infer/", lambda n: n.startswith("infer/")),
                    ("ort-training/", lambda n: n.startswith("ort-training/")),
                    ("models/", lambda n: n.startswith("models/"))):
    g = [r for r in ok if test(r["name"])]
    if g:
        print(f"{group}: {len(g)} models; mean saving {statistics.mean(r['sav_shared'] for r in g):.1f}% against the "
              f"sharing-aware input-order peak, {statistics.mean(r['sav_plain'] for r in g):.1f}% against the no-sharing "
              f"input peak; optimal orders {sum(r['schedule_status'] == 'optimal' for r in g)}, zero-fragmentation arenas "
              f"{sum(r['arena_bytes'] == r['peak_bytes'] for r in g)}; median {statistics.median(r['total_seconds'] for r in g):.2f} s, "
              f"max {max(r['total_seconds'] for r in g):.2f} s")
train = [r for r in ok if r["name"].startswith(("train/", "ort-training/"))]
print(f"Training graphs (train/, ort-training/): median end to end {statistics.median(r['total_seconds'] for r in train):.2f} s")
print(f"Load average at the end of the run: {open('/proc/loadavg').read().split()[:3]}")
PY
