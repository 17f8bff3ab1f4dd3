#!/usr/bin/env bash
# What ONNX Runtime for Node holds under each of its memory settings (arena
# and memory pattern on or off), predicted (olla-onnx's report, ort_settings)
# against measured (tests/ort/measure.sh --settings all: the first run, and
# the most held over three runs), for the input and the written model.
#
#   bench/ort_settings_bench.sh [MODEL.onnx ...]     (default: ../shared/corpus/infer/*.onnx)
#
# Each model at batch 1 and, when an input has a symbolic dimension, 32
# (--dim batch=B when the model names a dimension batch). The input and the
# written model are measured in one process. Needs the build (build/olla-onnx,
# the counter) and scripts/setup_ort.sh. Prints one Markdown table row per
# model, batch, setting and side.
set -eu
src="$(cd "$(dirname "$0")/.." && pwd)"
bin="$src/build"
. "$src/tests/ort/ort_env.sh"
ort_skip_unless_ready onnx counter
models=("$@")
[ ${#models[@]} -gt 0 ] || models=("$src"/../shared/corpus/infer/*.onnx)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| model | batch | arena | memory pattern | side | first run predicted | measured | diff | three runs predicted | measured | diff |"
echo "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|"
/usr/bin/python3 "$src/tests/tools/ort_settings_check.py" cases "${models[@]}" >"$work/models.tsv"
while IFS=$'\t' read -r m symbolic uses_batch; do
  for b in 1 32; do
    [ "$b" = 32 ] && [ "$symbolic" = 0 ] && continue
    dims=(); [ "$uses_batch" = 1 ] && dims=(--dim "batch=$b")
    name="$(basename "$m" .onnx)"
    "$bin/olla-onnx" -q "${dims[@]}" --report "$work/r.json" "$m" "$work/w.onnx"
    "$ort/measure.sh" --lib "$lib" "$m" "$work/w.onnx" --dim "batch=$b" --settings all >"$work/m.jsonl" 2>/dev/null
    /usr/bin/python3 - "$name" "$b" "$work/r.json" "$work/m.jsonl" "$m" "$work/w.onnx" <<'PY'
import json, sys
name, b, rp, mp, inp, wp = sys.argv[1:]
rep = json.load(open(rp))
side_of = {inp: "input", wp: "written"}
meas = {}
for line in open(mp):
    m = json.loads(line)
    if "skip" in m:
        print(f"| {name} | {b} | | | {side_of[m['model']]} | skipped: {m['skip']} | | | | | |")
        continue
    meas[(side_of[m["model"]], m["arena"], m["pattern"])] = m
if rep.get("ort_allocated_bytes") is None:
    print(f"| {name} | {b} | | | | not modelled: {rep.get('ort_model_note')} | | | | | |")
    sys.exit(0)
for s in rep["ort_settings"]:
    for side, pre in (("input", "input_"), ("written", "")):
        m = meas.get((side, s["enableCpuMemArena"], s["enableMemPattern"]))
        if not m:
            continue
        f, st = s[pre + "first_run_bytes"], s[pre + "steady_bytes"]
        d1 = 100.0 * (f - m["first_run_bytes"]) / max(m["first_run_bytes"], 1)
        d2 = 100.0 * (st - m["steady_bytes"]) / max(m["steady_bytes"], 1)
        print(f"| {name} | {b} | {'on' if s['enableCpuMemArena'] else 'off'} | {'on' if s['enableMemPattern'] else 'off'} "
              f"| {side} | {f:,} | {m['first_run_bytes']:,} | {d1:+.2f}% | {st:,} | {m['steady_bytes']:,} | {d2:+.2f}% |")
PY
  done
done <"$work/models.tsv"
