#!/usr/bin/env bash
# Recomputation written by hand (tests/ort/remat_by_hand.py, the rewrite
# olla-onnx's --memory-limit is to make), measured in ONNX Runtime's training
# WebAssembly build (tests/ort/train_run.mjs: one process per figure, heap
# high-water mark exact to the 64 KiB page):
# - the runtime's fixed overhead: a one-Neg graph's heap minus its input and
#   output, at three sizes;
# - a transformer and a CNN training step (scripts/make_training_models.py)
#   at a size where activations dominate: the input step, and the step with
#   every forward activation recomputed but the checkpoints (transformer: the
#   residual stream; CNN: the Relu and MaxPool outputs), the copies listed
#   three ways (--place consumer, backward-start, original); the same with
#   the parameter updates listed in reverse (bench/reverse_updates.py); the
#   input and the rewrite at graph optimization level `all`; for the CNN, batch
#   normalization copied too (remat_by_hand.py --allow BatchNormInternal);
#   per row: outputs bit-identical to the input's (at the same --opt) or not,
#   heap, change, ORT's planner's prediction (ort_predict, built from
#   tests/tools/ort_predict.c, when built), the run's seconds as a ratio to
#   the input's in the same table;
# - when the runtime runs the copies (train_run.mjs --order, copy_lateness.py).
#
#   bench/ort_remat_bench.sh [BUILD_DIR]        (default: build)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
src="$here"
. "$here/tests/ort/ort_env.sh"
ort_training_skip_unless_ready
py=/usr/bin/python3
gen="$here/scripts/make_training_models.py"
predict="$build/tests/ort_predict"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# measure MODEL ARGS...: train_run.mjs's report in $work/last.json
measure() { node "$ort/train_run.mjs" "$@" >"$work/last.json" 2>"$work/last.err" || { cat "$work/last.err" >&2; return 1; }; }
j() { jq -r "$1" "$work/last.json"; }
hashes() { jq -r '[.outputs[] | .name + ":" + .sha256] | sort | join(",")' "$work/last.json"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }'; }
predicted() { if [ -x "$predict" ]; then "$predict" "$1" 2>/dev/null | jq -r .predicted_peak_bytes; else echo "-"; fi; }

echo "### The runtime's fixed overhead (one Neg on float32[batch, 1048576])"
echo
echo "| batch | input + output bytes | heap bytes | heap - input - output |"
echo "|---:|---:|---:|---:|"
for batch in 1 4 16; do
  "$py" "$gen" "$work/ovh$batch" --kinds overhead --width 1048576 --batch "$batch" >/dev/null
  measure "$work/ovh$batch/overhead.onnx" || continue
  io=$((2 * 4 * 1048576 * batch))
  echo "| $batch | $io | $(j .heap_bytes) | $(( $(j .heap_bytes) - io )) |"
done
echo
echo "Heap at the start: $(j .heap_start_bytes) bytes."
echo

# table NAME GEN_ARGS KEEP [ALLOW_OP]: with ALLOW_OP, rows where that impure
# operator is copied too (remat_by_hand.py --allow).
table() {
  local name="$1" args="$2" keep="$3" allow="${4:-}" dir="$work/$1"
  # shellcheck disable=SC2086
  "$py" "$gen" "$dir" $args >"$work/gen.txt"
  local model="$dir/${name}.onnx"
  echo "### $name: $(sed 's/.*: //' "$work/gen.txt") ($args; checkpoints /$keep/)"
  echo
  for place in consumer backward-start original; do
    "$py" "$ort/remat_by_hand.py" "$model" "$dir/remat_$place.onnx" --keep "$keep" --place "$place" >"$work/remat.txt"
  done
  echo "Recomputed: $(jq -c '{recomputed_tensors, copied_nodes, copied_ops}' "$work/remat.txt")"
  echo
  "$py" "$here/bench/reverse_updates.py" "$model" "$dir/input_rev.onnx" >/dev/null
  "$py" "$here/bench/reverse_updates.py" "$dir/remat_consumer.onnx" "$dir/remat_rev.onnx" >/dev/null
  if [ -n "$allow" ]; then
    "$py" "$ort/remat_by_hand.py" "$model" "$dir/remat_allow.onnx" --keep "$keep" --allow "$allow" --place consumer \
      >"$work/remat_allow.txt"
    "$py" "$here/bench/reverse_updates.py" "$dir/remat_allow.onnx" "$dir/remat_allow_rev.onnx" >/dev/null
  fi
  echo "| variant | outputs | heap bytes | vs input | ORT planner's prediction | run time vs input |"
  echo "|---|---|---:|---:|---:|---:|"
  measure "$model" || return
  local base_heap base_hash base_time all_hash
  base_heap="$(j .heap_bytes)"; base_hash="$(hashes)"; base_time="$(j .run_seconds)"
  echo "| input | - | $base_heap | - | $(predicted "$model") | 1.00 ($base_time s) |"
  measure "$model" --opt all || return
  all_hash="$(hashes)"
  # row LABEL MODEL ARGS...: outputs compared with the input's at the same --opt
  row() {
    local label="$1" m="$2"; shift 2
    measure "$m" "$@" || { echo "| $label | does not run ||||"; return; }
    local same="differ" want="$base_hash"
    [[ " $* " == *" --opt all "* ]] && want="$all_hash"
    [ "$(hashes)" = "$want" ] && same="identical"
    echo "| $label | $same | $(j .heap_bytes) | $(pct "$(j .heap_bytes)" "$base_heap") | $(predicted "$m") |" \
      "$(awk -v a="$(j .run_seconds)" -v b="$base_time" 'BEGIN { printf "%.2f", a / b }') |"
  }
  row "recomputed, copies before their first reader (consumer)" "$dir/remat_consumer.onnx"
  row "recomputed, copies before the backward pass (backward-start)" "$dir/remat_backward-start.onnx"
  row "recomputed, copies after their originals (original)" "$dir/remat_original.onnx"
  row "input, updates listed in reverse" "$dir/input_rev.onnx"
  row "recomputed (consumer), updates listed in reverse" "$dir/remat_rev.onnx"
  row "input, --opt all" "$model" --opt all
  row "recomputed (consumer), --opt all" "$dir/remat_consumer.onnx" --opt all
  if [ -n "$allow" ]; then
    row "$allow copied too (consumer)" "$dir/remat_allow.onnx"
    row "$allow copied too (consumer), updates listed in reverse" "$dir/remat_allow_rev.onnx"
  fi
  echo
  measure "$dir/remat_consumer.onnx" --order || return
  jq -r '.executed[]' "$work/last.json" >"$work/order.txt"
  echo "When the copies run (consumer listing, measured order): $("$py" "$ort/copy_lateness.py" "$model" \
    "$dir/remat_consumer.onnx" "$work/order.txt" | jq -c '{copies, gap_median, gap_p90, gap_max, late_fraction}')"
  measure "$dir/remat_backward-start.onnx" --order || return
  jq -r '.executed[]' "$work/last.json" >"$work/order.txt"
  echo "When the copies run (backward-start listing, measured order): $("$py" "$ort/copy_lateness.py" "$model" \
    "$dir/remat_backward-start.onnx" "$work/order.txt" | jq -c '{copies, gap_median, gap_p90, gap_max, late_fraction}')"
  local copies_all
  measure "$dir/remat_consumer.onnx" --order --opt all || return
  copies_all="$(jq '[.executed[] | select(test("recomputed"))] | length' "$work/last.json")"
  echo "Copies that still run at --opt all: $copies_all of $(jq .copied_nodes "$work/remat.txt")" \
    "($(jq -r '[.executed[] | select(test("recomputed"))] | map(sub("\\.recomputed.*"; "")) | join(", ")' "$work/last.json" | cut -c1-400))"
  echo
}

table transformer "--kinds transformer --depth 4 --width 256 --seq 256 --heads 8 --batch 8" 'residual|embed\.out'
table cnn "--kinds cnn --depth 6 --width 32 --image 64 --batch 32" 'relu|pool' BatchNormInternal

echo "### Run time of the test steps (train_run.mjs run_seconds, one run each)"
echo
echo "| step | size | heap bytes | run seconds |"
echo "|---|---|---:|---:|"
"$py" "$gen" "$work/small" >/dev/null
for kind in mlp cnn transformer; do
  measure "$work/small/$kind.onnx" && echo "| $kind | make_training_models.py defaults | $(j .heap_bytes) | $(j .run_seconds) |"
done
