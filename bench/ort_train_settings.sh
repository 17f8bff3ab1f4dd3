#!/usr/bin/env bash
# What ONNX Runtime's training build holds for a training step and for the
# listing olla-onnx writes, under each memory setting (arena and memory
# pattern on or off), predicted (the report's ort_settings) against measured
# (tests/ort/train_run.mjs --runs 3: the WebAssembly heap after the first run
# and after the third, in one session).
#
#   bench/ort_train_settings.sh [--olla BIN] MODEL.onnx [...]
#
# Each model is written with olla-onnx's default options (BIN, default
# build/olla-onnx) and run without --dim: a model olla-onnx or the runtime
# cannot take as it is (a symbolic dimension, an operator without a kernel)
# gets one row saying why. The heap holds ONNX Runtime's fixed overhead and
# the copies of the inputs beside what the run allocates, and grows in
# 64 KiB pages, so only the change from the input to the written model is
# compared: predicted (written - input) against measured, from one checkout
# (tests/ort/README.md). The outputs column compares the two models' output
# hashes, as train_compare.mjs does. Needs the build and
# scripts/setup_ort.sh. Prints one Markdown table row per model and setting.
set -eu
src="$(cd "$(dirname "$0")/.." && pwd)"
olla="$src/build/olla-onnx"
if [ "${1:-}" = --olla ]; then olla="$2"; shift 2; fi
[ $# -gt 0 ] || { echo "usage: bench/ort_train_settings.sh [--olla BIN] MODEL.onnx [...]" >&2; exit 2; }
. "$src/tests/ort/ort_env.sh"
ort_training_skip_unless_ready
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| model | listing | arena | pattern | first run: predicted change | measured | three runs: predicted | measured | outputs |"
echo "|---|---|---|---|---:|---:|---:|---:|---|"
for m in "$@"; do
  name="$(basename "$(dirname "$m")")/$(basename "$m" .onnx)"
  if ! "$olla" -q --report "$work/r.json" "$m" "$work/w.onnx" 2>"$work/olla.err"; then
    echo "| $name | olla-onnx failed: $(head -c 200 "$work/olla.err" | tr '\n|' '  ') | | | | | | | |"
    continue
  fi
  for arena in off on; do
    for pattern in off on; do
      for side in in w; do
        model="$m"; [ "$side" = w ] && model="$work/w.onnx"
        node "$ort/train_run.mjs" "$model" --arena "$arena" --pattern "$pattern" --runs 3 \
          >"$work/$side.$arena.$pattern.json" 2>"$work/$side.err" || {
          echo "| $name | | $arena | $pattern | train_run.mjs failed: $(head -c 200 "$work/$side.err" | tr '\n|' '  ') | | | | |"
          continue 4
        }
      done
    done
  done
  /usr/bin/python3 - "$name" "$work" <<'PY'
import json, sys
name, work = sys.argv[1:]
rep = json.load(open(f"{work}/r.json"))
settings = {(s["enableCpuMemArena"], s["enableMemPattern"]): s for s in rep.get("ort_settings") or []}
for arena in ("off", "on"):
    for pattern in ("off", "on"):
        a = json.load(open(f"{work}/in.{arena}.{pattern}.json"))
        b = json.load(open(f"{work}/w.{arena}.{pattern}.json"))
        same = [(o["name"], o["sha256"]) for o in a["outputs"]] == [(o["name"], o["sha256"]) for o in b["outputs"]]
        s = settings.get((arena == "on", pattern == "on"))
        def pred(first):
            if not s:
                return "not modelled"
            key = "first_run_bytes" if first else "steady_bytes"
            i, w = s["input_" + key], s[key]
            if i is None or w is None or i < 0 or w < 0:
                return "unknown"
            return f"{w - i:+,} ({100.0 * (w - i) / max(i, 1):+.2f}%)"
        f1 = b["heap_bytes_runs"][0] - a["heap_bytes_runs"][0]
        f3 = b["heap_bytes_runs"][-1] - a["heap_bytes_runs"][-1]
        print(f"| {name} | {rep.get('runtime_search')} | {arena} | {pattern} | {pred(True)} | {f1:+,} "
              f"({100.0 * f1 / a['heap_bytes_runs'][0]:+.2f}% of {a['heap_bytes_runs'][0]:,}) | {pred(False)} | "
              f"{f3:+,} ({100.0 * f3 / a['heap_bytes_runs'][-1]:+.2f}% of {a['heap_bytes_runs'][-1]:,}) | "
              f"{'identical' if same else 'DIFFER'} |")
PY
done
