#!/usr/bin/env bash
# The model of ONNX Runtime's allocation planner (passes/runtime/
# olla_ort_memory.h) against the real process, one rule at a time: for each
# model of tests/ort/make_memory_models.py (in place, views, reuse by static
# shape and not by bytes, symbolic dims kept as names, a tensor nobody reads,
# a graph output, Conv/MatMul/Where/LRN/Softmax scratch), the planner's
# decision the model is made for (ort_predict --decisions) and the predicted
# peak equal to the first-run peak tests/ort/measure.sh measures, within
# 0.1%. Each model separates the rule from its absence by 262,144 bytes or
# more (or by the scratch), so a broken rule fails here.
# Needs node, tests/ort/node_modules (scripts/setup_ort.sh), /usr/bin/python3
# with onnx, the counter and ort_predict built; exits 77 (skipped) without them.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
bin="${OLLA_BINARY_DIR:?OLLA_BINARY_DIR must point at the build tree}"
py=/usr/bin/python3
. "$src/tests/ort/ort_env.sh"
predict="${OLLA_ORT_PREDICT:-$bin/tests/ort_predict}"
ort_skip_unless_ready onnx counter
[ -x "$predict" ] || { echo "FAILED: no ort_predict at $predict"; exit 1; }
. "$src/tests/cli/lib.sh"
cli_tmp
work=$tmp

"$py" "$ort/make_memory_models.py" "$work" || { echo "FAILED: make_memory_models.py"; exit 1; }

# within A B: A is within 0.1% of B.
within() { [ $(( ($1 - $2) * ($1 - $2) * 1000000 )) -le $(( $2 * $2 )) ]; }

for model in "$work"/*.onnx; do
  name="$(basename "$model" .onnx)"
  pred_line="$("$predict" "$model" --dim batch=64 --decisions 2>"$work/decisions")" ||
    { bad "$name: ort_predict: $pred_line $(cat "$work/decisions")"; continue; }
  pred="$(json_int predicted_peak_bytes "$pred_line")"
  while read -r m tensor kind; do
    [ "$m" = "$name" ] || continue
    got="$(awk -v t="$tensor" '$3 == t {print $4}' "$work/decisions")"
    [ "$got" = "$kind" ] && ok "$name: $tensor is $kind" || bad "$name: $tensor is '$got', the rule says $kind"
  done <"$work/expect.txt"
  meas=""
  for attempt in 1 2; do  # a second process when Node's own allocations fell into the first
    line="$("$ort/measure.sh" --lib "$lib" "$model" --dim batch=64 --runs 1 2>/dev/null)" ||
      { bad "$name: measure.sh failed: $line"; break; }
    meas="$(json_int peak_bytes "$line")"
    within "$pred" "$meas" && break
  done
  [ -n "$meas" ] || continue
  if within "$pred" "$meas"; then ok "$name: predicted $pred, measured $meas"
  else bad "$name: predicted $pred bytes, ONNX Runtime allocated $meas"; fi
done

cli_finish "ort memory"
