#!/usr/bin/env bash
# What ONNX Runtime for Node holds under each of its memory settings (arena
# and memory pattern on or off), predicted (olla-onnx's report, ort_settings)
# against measured (tests/ort/measure.sh --settings all: the first run, and
# the most held over three runs), for the input and the written model.
#
#   bench/ort_settings_bench.sh [MODEL.onnx ...]     (default: ../shared/corpus/infer/*.onnx)
#
# Needs the build (build/olla-onnx, the counter) and scripts/setup_ort.sh.
# Prints one Markdown table row per model, batch, setting and side.
set -eu
src="$(cd "$(dirname "$0")/.." && pwd)"
bin="$src/build"
. "$src/tests/ort/ort_env.sh"
ort_skip_unless_ready counter
models=("$@")
[ ${#models[@]} -gt 0 ] || models=("$src"/../shared/corpus/infer/*.onnx)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| model | batch | arena | memory pattern | side | first run predicted | measured | diff | three runs predicted | measured | diff |"
echo "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|"
for m in "${models[@]}"; do
  for b in 1 32; do
    name="$(basename "$m" .onnx)"
    "$bin/olla-onnx" -q --dim batch=$b --report "$work/r.json" "$m" "$work/w.onnx"
    "$ort/measure.sh" --lib "$lib" "$m" --dim batch=$b --settings all >"$work/in.jsonl" 2>/dev/null
    "$ort/measure.sh" --lib "$lib" "$work/w.onnx" --dim batch=$b --settings all >"$work/out.jsonl" 2>/dev/null
    /usr/bin/python3 - "$name" "$b" "$work/r.json" "$work/in.jsonl" "$work/out.jsonl" <<'PY'
import json, sys
name, b, rp, ip, op = sys.argv[1:]
rep = json.load(open(rp))
meas = {}
for side, p in (("input", ip), ("written", op)):
    for line in open(p):
        m = json.loads(line)
        meas[(side, m["arena"], m["pattern"])] = m
for s in rep["ort_settings"]:
    for side, pre in (("input", "input_"), ("written", "")):
        m = meas[(side, s["enableCpuMemArena"], s["enableMemPattern"])]
        f, st = s[pre + "first_run_bytes"], s[pre + "steady_bytes"]
        d1 = 100.0 * (f - m["first_run_bytes"]) / m["first_run_bytes"]
        d2 = 100.0 * (st - m["steady_bytes"]) / m["steady_bytes"]
        print(f"| {name} | {b} | {'on' if s['enableCpuMemArena'] else 'off'} | {'on' if s['enableMemPattern'] else 'off'} "
              f"| {side} | {f:,} | {m['first_run_bytes']:,} | {d1:+.2f}% | {st:,} | {m['steady_bytes']:,} | {d2:+.2f}% |")
PY
  done
done
