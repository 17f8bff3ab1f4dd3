#!/usr/bin/env bash
# What ONNX Runtime really allocates for the models olla-onnx writes: every
# model of ../shared/corpus/infer and models/ that onnxruntime-node runs, at
# batch 1 and 32 (a symbolic batch; models/ without one at their own sizes),
# planned with olla-onnx's defaults (--runtime ort) and measured in the
# process (tests/ort/measure.sh, first run, graph optimizations off) for the
# input and the written model, beside the model of ORT's planner
# (ort_predict, built from tests/tools/ort_predict.c, counted as the
# measurement counts) and the plan's arena and lower bound (what a runtime
# following the plan would need).
#
#   bench/ort_written_bench.sh [BUILD_DIR]      (default: build)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
corpus="${OLLA_CORPUS:-$here/../shared/corpus}"
src="$here" bin="$build"
. "$here/tests/ort/ort_env.sh"
predict="$build/tests/ort_predict"
[ -x "$predict" ] && [ -f "$lib" ] || { echo "build ort_predict and the counter first (cmake --build $build)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "0.00"; else printf "%+.2f", 100 * (a - b) / b }'; }
json() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

echo "| model | batch | ORT measured: input | ORT measured: written | change | predicted: input | predicted: written | plan's arena | lower bound |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
row() {
  local model="$1" batch="$2" name in_m out_m in_p out_p dims
  name="$(basename "$model" .onnx)"
  for data in "$(dirname "$model")"/*.bin; do [ -f "$data" ] && cp -f "$data" "$work/" 2>/dev/null; done
  dims=$(/usr/bin/python3 "$here/tests/tools/dim_names.py" "$model" batch=$batch)
  # shellcheck disable=SC2086
  "$build/olla-onnx" -q $dims --report "$work/r.json" "$model" "$work/out.onnx" || { echo "| $name | $batch | olla-onnx failed ||||||||"; return; }
  in_m="$(json_int peak_bytes "$("$ort/measure.sh" --lib "$lib" "$model" --dim "batch=$batch" --runs 1 2>/dev/null)")"
  out_m="$(json_int peak_bytes "$("$ort/measure.sh" --lib "$lib" "$work/out.onnx" --dim "batch=$batch" --runs 1 2>/dev/null)")"
  in_p="$(json_int predicted_peak_bytes "$("$predict" "$model" --dim "batch=$batch" 2>/dev/null)")"
  out_p="$(json_int predicted_peak_bytes "$("$predict" "$work/out.onnx" --dim "batch=$batch" 2>/dev/null)")"
  [ -n "$in_m" ] || { echo "| $name | $batch | ORT cannot run it ||||||||"; return; }
  echo "| $name | $batch | $in_m | $out_m | $(pct "$out_m" "$in_m")% | $in_p | $out_p | $(json "$work/r.json" arena_bytes) | $(json "$work/r.json" lower_bound_bytes) |"
}
models=("$here"/models/*.onnx)
[ -d "$corpus/infer" ] && models=("$corpus"/infer/*.onnx "${models[@]}")
for model in "${models[@]}"; do
  if [ -n "$(node "$ort/dims.mjs" "$model" 2>/dev/null)" ]; then
    row "$model" 1
    row "$model" 32
  else
    row "$model" 1
  fi
done
echo
echo "Load average at the end of the run: $(cut -d' ' -f1-3 /proc/loadavg)"
