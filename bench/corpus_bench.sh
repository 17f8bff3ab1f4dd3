#!/usr/bin/env bash
# End-to-end benchmark: olla-onnx --report on every training model of the
# corpus (train/ at each batch size, ort-training/) and on models/, then the
# ordering, placement and savings tables.
#
#   bench/corpus_bench.sh [BUILD_DIR] [TIME_LIMIT]      (defaults: build, 60)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
limit=${2:-60}
corpus=$here/../shared/corpus
# shellcheck source=bench/convert_corpus.sh
. "$here/bench/convert_corpus.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
models=("$corpus"/train/*.onnx "$corpus"/ort-training/*.onnx "$here"/models/*.onnx)
# batch=8 and batch_size=8 where the model declares them
bindings() { echo batch=8 batch_size=8; }
convert_corpus "$out" "$build" "$limit" bindings "${models[@]}"
/usr/bin/python3 - "$out" "$limit" "$here" <<'PY'
import os, statistics, sys
sys.path.insert(0, os.path.join(sys.argv[3], "bench"))
from reports import load_reports, mib
out, limit = sys.argv[1], sys.argv[2]
rows = load_reports(out)
print(f"Time limit {limit} s per model; symbolic batch dims bound to 8; sizes rounded to 64 bytes.\n")
print("### Ordering\n")
print("| model | nodes | input-order peak MiB | best heuristic MiB | final peak MiB | lower bound MiB | gap | saving | order s | status |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for r in rows:
    if "error" in r:
        print(f"| {r['name']} | failed: {r['error']} |||||||||"); continue
    lb = r["lower_bound_bytes"]
    gap = f"{100 * (r['peak_bytes'] / lb - 1):.2f}%" if lb else "n/a"
    sav = 100 * (1 - r["peak_bytes"] / r["input_order_peak_bytes"]) if r["input_order_peak_bytes"] else 0
    print(f"| {r['name']} | {r['nodes']} | {mib(r['input_order_peak_bytes'])} | {mib(r['heuristic_peak_bytes'])} | "
          f"{mib(r['peak_bytes'])} | {mib(lb) if lb else 'n/a'} | {gap} | {sav:.1f}% | {r['schedule_seconds']:.2f} | {r['schedule_status']} |")
ok = [r for r in rows if "error" not in r]
print(f"\nMedian ordering time {statistics.median(r['schedule_seconds'] for r in ok):.2f} s, max {max(r['schedule_seconds'] for r in ok):.2f} s.")
for bs in ("bs1", "bs32"):
    sel = [r for r in ok if r["name"].startswith("train/") and r["name"].endswith(bs)]
    if sel:
        avg = statistics.mean(100 * (1 - r["peak_bytes"] / r["input_order_peak_bytes"]) for r in sel)
        print(f"Average ordering saving on train/*_{bs}: {avg:.1f}% (paper: {'22.5' if bs == 'bs1' else '10.1'}%).")
print("\n### Placement\n")
print("| model | planned tensors | peak MiB | arena MiB | fragmentation | placement s | status |")
print("|---|---:|---:|---:|---:|---:|---|")
for r in ok:
    frag = 100 * (r["arena_bytes"] - r["peak_bytes"]) / r["arena_bytes"] if r["arena_bytes"] else 0
    print(f"| {r['name']} | {r['planned_tensors']} | {mib(r['peak_bytes'])} | {mib(r['arena_bytes'])} | {frag:.3f}% | "
          f"{r['placement_seconds']:.2f} | {r['placement_status']} |")
print(f"\nMedian placement time {statistics.median(r['placement_seconds'] for r in ok):.2f} s, max {max(r['placement_seconds'] for r in ok):.2f} s; "
      f"zero fragmentation on {sum(1 for r in ok if r['arena_bytes'] == r['peak_bytes'])} of {len(ok)} models.")
print("\n### What a user saves\n")
print("| model | online allocator, input order MiB | its fragmentation | input-order peak MiB | olla-onnx arena MiB | saving vs online | total s |")
print("|---|---:|---:|---:|---:|---:|---:|")
for r in ok:
    on = r["input_order_online_arena_bytes"]
    sav = 100 * (1 - r["arena_bytes"] / on) if on else 0
    print(f"| {r['name']} | {mib(on)} | {100 * r['input_order_fragmentation']:.1f}% | {mib(r['input_order_peak_bytes'])} | "
          f"{mib(r['arena_bytes'])} | {sav:.1f}% | {r['total_seconds']:.2f} |")
for bs in ("bs1", "bs32"):
    sel = [r for r in ok if r["name"].startswith("train/") and r["name"].endswith(bs)]
    if sel:
        frag = statistics.mean(100 * r["input_order_fragmentation"] for r in sel)
        sav = statistics.mean(100 * (1 - r["arena_bytes"] / r["input_order_online_arena_bytes"]) for r in sel)
        print(f"\ntrain/*_{bs}: online-allocator fragmentation {frag:.1f}% on average (paper, PyTorch: {'7.9' if bs == 'bs1' else '26.1'}%); "
              f"total saving {sav:.1f}% on average (paper: {'30.4' if bs == 'bs1' else '36.1'}%).")
PY
