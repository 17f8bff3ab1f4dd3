#!/usr/bin/env bash
# What ONNX Runtime allocates, predicted against measured, on real models:
# every model of $OLLA_CORPUS/infer (batch 1 and 32), of models/ (their
# own sizes; a symbolic batch at 1 and 32) and of
# tests/ort/make_settings_models.py (a written model whose saving shows only
# with the arena off, the run's bookkeeping, If nested three levels), in the
# order ORT executes it (tests/ort/exec_order.mjs), must be predicted within
# 0.5% of the first-run peak tests/ort/measure.sh measures (measured once
# each; run to run it repeats within 0.1%). A model with control flow is
# reported, not judged: the model does not count what its subgraphs
# allocate (passes/runtime/olla_ort_memory.h); its report must give no ORT
# figures and say why. The report's figures under each of ORT's memory
# settings (arena and memory pattern on or off: the first run, and the most
# held over three runs), for the input and the written model, must match
# the process (tests/tools/ort_settings_check.py: 0.5% for the arena off
# with the memory pattern, 2% for the rest), and every setting under which
# the summary says the written model's saving shows must show it in the
# process. On the bookkeeping model, the tensors alone (ort_predict
# --tensors-only) must miss by more than 0.5%. And the converter never makes ORT
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
  /usr/bin/python3 "$ort/make_settings_models.py" "$work" || { echo "FAILED: make_settings_models.py"; exit 1; }
  models="$models $work/steer.onnx $work/bookkeeping.onnx $work/nested_if.onnx"
fi
settings_ok=0

# never_worse MODEL BATCH MEASURED: ORT allocates no more for the written model.
never_worse() {
  local model="$1" batch="$2" meas="$3" name out line written dims
  name="$(basename "$model") batch=$batch"
  out="$work/written_$(basename "$model")"
  [ "$(dirname "$model")" != "$work" ] && for data in "$(dirname "$model")"/*.bin; do [ -f "$data" ] && cp -f "$data" "$work/"; done
  dims=$(/usr/bin/python3 "$src/tests/tools/dim_names.py" "$model" batch=$batch)
  # shellcheck disable=SC2086
  if ! "$OLLA" -q --time-limit 20 $dims --report "$work/report.json" "$model" "$out" 2>"$work/conv.err"; then
    fail "$name: olla-onnx: $(cat "$work/conv.err")"; return
  fi
  "$ort/measure.sh" --lib "$lib" "$out" --dim "batch=$batch" --settings all >"$work/written.jsonl" 2>/dev/null ||
    { fail "$name: measure.sh on the written model: $(cat "$work/written.jsonl")"; return; }
  written="$(json_int first_run_bytes "$(head -1 "$work/written.jsonl")")"
  if /usr/bin/python3 "$src/tests/tools/ort_settings_check.py" "$name" "$work/report.json" "$work/input.jsonl" \
       "$work/written.jsonl" "$model" "$batch" >"$work/settings.out"; then
    settings_ok=$((settings_ok + 1)); grep -c "^ok" "$work/settings.out" | sed "s/^/ok: $name: /; s/$/ checks of ORT's settings/"
  else
    grep "^FAILED" "$work/settings.out"; failures=$((failures + 1))
  fi
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
  "$ort/measure.sh" --lib "$lib" "$model" --dim "batch=$batch" --settings all >"$work/input.jsonl" 2>/dev/null
  case $? in
    0) ;;
    77) echo "skip: $name: $(cat "$work/input.jsonl")"; return ;;
    *) fail "$name: measure.sh: $(cat "$work/input.jsonl")"; return ;;
  esac
  meas="$(json_int first_run_bytes "$(head -1 "$work/input.jsonl")")"
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
  if [ "$(basename "$model")" = bookkeeping.onnx ]; then
    local bare; bare="$(json_int predicted_peak_bytes "$("$predict" "$model" --dim "batch=$batch" --tensors-only 2>&1)")"
    local miss=$((meas - bare)); [ "$miss" -lt 0 ] && miss=$((-miss))
    [ $((miss * 200)) -gt "$meas" ] && echo "ok: $name: the tensors alone miss by $miss bytes: the bookkeeping counts" ||
      fail "$name: the tensors alone ($bare) are within 0.5% of $meas: the model does not exercise the bookkeeping"
  fi
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
[ "$settings_ok" -gt 0 ] || fail "no report's ORT settings were checked"
[ "$failures" -eq 0 ] && echo "PASS ($judged predictions within 0.5%; $never_worse_ok written models no worse; $settings_ok reports' ORT settings match the process)" && exit 0
echo "$failures failure(s)"; exit 1
