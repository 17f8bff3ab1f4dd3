#!/usr/bin/env bash
# What ONNX Runtime allocates, predicted against measured, on real models:
# every model of $OLLA_CORPUS/infer (batch 1 and 32) and of models/ (their
# own sizes; a symbolic batch at 1 and 32), in the order ORT executes it
# (tests/ort/exec_order.mjs), must be predicted within 0.5% of the first-run
# peak tests/ort/measure.sh measures (measured once each; run to run it
# repeats within 0.1%). A model with control flow is reported, not judged:
# the model does not count what its subgraphs allocate
# (passes/runtime/olla_ort_memory.h). And the converter never makes ORT
# allocate more: each model written by olla-onnx (its default, --runtime ort,
# at the same batch) is measured too, and ORT must hold no more for it than
# for the input, beyond the measurement's noise (0.1%, and at least 8 KiB for
# the small models, where Node's own allocations show). OLLA_ORT_MEMORY_MODELS
# overrides the model list (paths, space-separated).
# Needs node, tests/ort/node_modules (scripts/setup_ort.sh), the counter and
# ort_predict built; exits 77 (skipped) without them.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
OLLA="${OLLA:?OLLA must name the olla-onnx binary}"
bin="${OLLA_BINARY_DIR:?OLLA_BINARY_DIR must point at the build tree}"
corpus="${OLLA_CORPUS:-$src/../shared/corpus}"
. "$src/tests/ort/ort_env.sh"
predict="${OLLA_ORT_PREDICT:-$bin/tests/ort_predict}"
ort_skip_unless_ready counter
[ -x "$predict" ] || { echo "FAILED: no ort_predict at $predict"; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
judged=0
never_worse_ok=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

models="${OLLA_ORT_MEMORY_MODELS:-}"
if [ -z "$models" ]; then
  [ -d "$corpus/infer" ] && models="$(ls "$corpus"/infer/*.onnx)" || echo "note: no corpus at $corpus/infer"
  models="$models $(ls "$src"/models/*.onnx)"
fi

# never_worse MODEL BATCH MEASURED: ORT allocates no more for the written model.
never_worse() {
  local model="$1" batch="$2" meas="$3" name out line written dims
  name="$(basename "$model") batch=$batch"
  out="$work/written_$(basename "$model")"
  for data in "$(dirname "$model")"/*.bin; do [ -f "$data" ] && cp -f "$data" "$work/"; done
  dims=$(/usr/bin/python3 "$src/tests/tools/dim_names.py" "$model" batch=$batch)
  # shellcheck disable=SC2086
  if ! "$OLLA" -q --time-limit 20 $dims "$model" "$out" 2>"$work/conv.err"; then
    fail "$name: olla-onnx: $(cat "$work/conv.err")"; return
  fi
  line="$("$ort/measure.sh" --lib "$lib" "$out" --dim "batch=$batch" --runs 1 2>/dev/null)" ||
    { fail "$name: measure.sh on the written model: $line"; return; }
  written="$(json_int peak_bytes "$line")"
  local slack=$((meas / 1000)); [ "$slack" -lt 8192 ] && slack=8192
  if [ "$written" -le $((meas + slack)) ]; then
    echo "ok: $name: ORT holds $written for the written model, $meas for the input"; never_worse_ok=$((never_worse_ok + 1))
  else
    fail "$name: ORT holds $written for the written model, more than the $meas it holds for the input"
  fi
}

# check MODEL BATCH: one prediction against one measurement.
check() {
  local model="$1" batch="$2" name line meas pred order_args=()
  name="$(basename "$model") batch=$batch"
  line="$("$ort/measure.sh" --lib "$lib" "$model" --dim "batch=$batch" --runs 1 2>/dev/null)"
  case $? in
    0) ;;
    77) echo "skip: $name: $line"; return ;;
    *) fail "$name: measure.sh: $line"; return ;;
  esac
  meas="$(json_int peak_bytes "$line")"
  if node "$ort/exec_order.mjs" "$model" --dim "batch=$batch" >"$work/order" 2>/dev/null; then
    order_args=(--order "$work/order")
  fi
  pred_line="$("$predict" "$model" --dim "batch=$batch" "${order_args[@]}" 2>&1)"
  if [ "$(json_int subgraph_ops "$pred_line")" != "0" ] || ! pred="$(json_int predicted_peak_bytes "$pred_line")" ||
     [ -z "$pred" ]; then
    pred_line="$("$predict" "$model" --dim "batch=$batch" 2>&1)"   # subgraph nodes in the profile: ORT's rule
    pred="$(json_int predicted_peak_bytes "$pred_line")"
  fi
  [ -n "$pred" ] || { fail "$name: ort_predict: $pred_line"; return; }
  never_worse "$model" "$batch" "$meas"
  local diff=$((pred - meas)); [ "$diff" -lt 0 ] && diff=$((-diff))
  local per_mille=$(( meas > 0 ? diff * 100000 / meas : (diff > 0 ? 100000 : 0) ))  # in 1/1000 %
  local report="$name: predicted $pred, measured $meas ($((per_mille / 1000)).$(printf %03d $((per_mille % 1000)))%)"
  if [ "$(json_int subgraph_ops "$pred_line")" != "0" ]; then
    echo "not judged (control flow, subgraphs not modelled): $report"
  elif [ $((diff * 200)) -le "$meas" ]; then
    echo "ok: $report"; judged=$((judged + 1))
  else
    fail "$report"
  fi
}

for model in $models; do
  if [ -n "$(node "$ort/dims.mjs" "$model" 2>/dev/null)" ]; then   # symbolic input dims
    check "$model" 1
    check "$model" 32
  else
    check "$model" 1
  fi
done

[ "$judged" -gt 0 ] || fail "no model was judged"
[ "$never_worse_ok" -gt 0 ] || fail "no written model was measured"
[ "$failures" -eq 0 ] && echo "PASS ($judged predictions within 0.5%; $never_worse_ok written models no worse)" && exit 0
echo "$failures failure(s)"; exit 1
