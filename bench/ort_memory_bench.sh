#!/usr/bin/env bash
# What ONNX Runtime allocates: measured in the process (tests/ort/measure.sh,
# first run) against the model of passes/runtime/olla_ort_memory.h
# (ort_predict), and what ORT's default optimization level (--opt all)
# allocates instead; then the model's figure for the training graphs
# onnxruntime-node cannot run. Prints markdown tables for bench/RESULTS.md.
#
#   bench/ort_memory_bench.sh [BUILD_DIR]      (default: build)
#
# Runnable models: ../shared/corpus/infer at batch 1 and 32, models/ at their
# own sizes (a symbolic batch at 1 and 32), in the order ORT executes them
# (tests/ort/exec_order.mjs; ORT's default rule for models with subgraphs,
# whose profile also lists the subgraphs' nodes). Training graphs:
# ../shared/corpus/train and ort-training (symbolic batch_size at 1 and 32),
# in the order ORT's default rule gives their listing.
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
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print (a == 0 ? "0.000" : "-"); else printf "%+.3f", 100 * (a - b) / b }'; }
num() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }

echo "| model | batch | measured (opt disabled) | predicted | predicted vs measured | measured --opt all | --opt all vs predicted | peak at node | subgraphs |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
runnable() {
  local model="$1" batch="$2" meas all pred_line order_args=()
  meas="$(json_int peak_bytes "$("$ort/measure.sh" --lib "$lib" "$model" --dim "batch=$batch" --runs 1 2>/dev/null)")"
  all="$(json_int peak_bytes "$("$ort/measure.sh" --lib "$lib" "$model" --dim "batch=$batch" --runs 1 --opt all 2>/dev/null)")"
  pred_line="$("$predict" "$model" --dim "batch=$batch")"
  if [ "$(json_int subgraph_ops "$pred_line")" = "0" ] &&
     node "$ort/exec_order.mjs" "$model" --dim "batch=$batch" >"$work/order" 2>/dev/null; then
    pred_line="$("$predict" "$model" --dim "batch=$batch" --order "$work/order")"
  fi
  local pred; pred="$(json_int predicted_peak_bytes "$pred_line")"
  echo "| $(basename "$model" .onnx) | $batch | $(num "$meas") | $(num "$pred") | $(pct "$pred" "$meas")% |" \
       "$(num "$all") | $(pct "$all" "$pred")% | $(json_int peak_step "$pred_line") / $(json_int executed "$pred_line") |" \
       "$(json_int subgraph_ops "$pred_line") |"
}
for m in "$corpus"/infer/*.onnx; do runnable "$m" 1; runnable "$m" 32; done
for m in "$here"/models/*.onnx; do
  if [ -n "$(node "$ort/dims.mjs" "$m" 2>/dev/null)" ]; then runnable "$m" 1; runnable "$m" 32; else runnable "$m" 1; fi
done

echo
echo "| training graph | predicted, as measured (blocks >= 4 KiB, bookkeeping, output copies) | tensors and scratch only | peak at node | nodes run |"
echo "|---|---:|---:|---:|---:|"
training() {
  local model="$1" label="$2"; shift 2
  local a b
  a="$("$predict" "$model" "$@" 2>&1)"; b="$("$predict" "$model" "$@" --tensors-only 2>&1)"
  echo "| $label | $(num "$(json_int predicted_peak_bytes "$a")") | $(num "$(json_int predicted_peak_bytes "$b")") |" \
       "$(json_int peak_step "$b") | $(json_int executed "$b") |"
}
for m in "$corpus"/train/*.onnx; do training "$m" "train/$(basename "$m" .onnx)"; done
for m in "$corpus"/ort-training/*.onnx; do
  for b in 1 32; do training "$m" "ort-training/$(basename "$m" .onnx) batch_size=$b" --dim "batch_size=$b"; done
done
