#!/usr/bin/env bash
# Batch conversion of the whole corpus: olla-onnx batch over ../shared/corpus,
# the closing table kept in bench/batch_corpus_table.txt and a summary printed.
#
#   bench/batch_corpus.sh [BUILD_DIR] [JOBS]      (defaults: build, 2)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
jobs=${2:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
set +e
"$build/olla-onnx" batch -j "$jobs" --dim batch=8 --dim batch_size=8 --report "$out/report.jsonl" \
  "$here/../shared/corpus" "$out/planned" 2> "$out/table.txt"
rc=$?
set -e
grep -v '^\[' "$out/table.txt" > "$here/bench/batch_corpus_table.txt"
echo "exit code $rc, $(( $(date +%s) - start )) s wall, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$out/report.jsonl" <<'PY'
import collections, json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ok = [r for r in rows if r["status"] == "ok"]
failed = [r for r in rows if r["status"] == "failed"]
print(f"{len(rows)} models: {len(ok)} converted, {len(failed)} failed")
causes = collections.Counter()
for r in failed:
    msg = r["error"].split(": ", 1)[-1]
    causes[re.sub(r"'[^']*'", "'…'", msg)[:100]] += 1
for cause, n in causes.most_common():
    print(f"  {n:4d}  {cause}")
for part in ("train/", "ort-training/", "infer/", "onnx-node/"):
    sel = [r for r in ok if f"/{part}" in r["model"]]
    if not sel:
        continue
    online = sum(r["input_order_online_arena_bytes"] for r in sel)
    peak = sum(r["input_order_peak_bytes"] for r in sel)
    arena = sum(r["arena_bytes"] for r in sel)
    secs = sorted(r["seconds"] for r in sel)
    print(f"{part:14s} {len(sel):5d} models: online allocator {online/2**20:10.1f} MiB, input-order peak "
          f"{peak/2**20:10.1f} MiB, arena {arena/2**20:10.1f} MiB; saving {100*(1-arena/online):5.1f}% vs online, "
          f"{100*(1-arena/peak):5.1f}% vs peak; median {secs[len(secs)//2]:.2f} s, max {secs[-1]:.2f} s")
PY
