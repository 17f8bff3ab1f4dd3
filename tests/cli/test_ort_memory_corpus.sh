#!/usr/bin/env bash
# What ONNX Runtime holds, predicted against measured, on real models: every
# model of $OLLA_CORPUS/infer, of models/, of tests/ort/make_settings_models.py
# (a written model whose saving shows only with the arena off, the run's
# bookkeeping, If nested three levels, a Loop, a Scan, a Loop whose trip
# count is a graph input) and the models of $OLLA_CORPUS/onnx-node with If,
# Loop or Scan nodes; at batch 1, and 32 for a model with a symbolic input
# dimension. Each is written by olla-onnx (its default, --runtime ort) with a
# report, then measured in the process, input and written model, under every
# choice of ORT's two memory settings (tests/ort/measure.sh --settings all:
# one process per batch for all models, the first run and the most held over
# three runs); a written model that lists the input's nodes in the input's
# order (only metadata differs) runs as the input does and is measured once.
# tests/tools/ort_settings_check.py then checks every report:
# input_ort_allocated_bytes and ort_allocated_bytes within 0.5% of the first
# run, every setting's figures within 2%, every saving the summary names
# shown by the process, the written model never held more than the input,
# and a report without figures saying why. The project's If, Loop and Scan models must be counted, the Loop with
# a run-time trip count must say so. On the bookkeeping model, the tensors
# alone (ort_predict --tensors-only) must miss by more than 0.5%.
# A model olla-onnx refuses, or ONNX Runtime cannot run, is skipped with its
# reason when it comes from onnx-node (those are operator tests, not all
# plannable); elsewhere that fails. OLLA_ORT_MEMORY_MODELS overrides the model
# list (paths, space-separated).
# Needs node, tests/ort/node_modules (scripts/setup_ort.sh), /usr/bin/python3
# with onnx, the counter and ort_predict built; exits 77 (skipped) without them.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
OLLA="${OLLA:?OLLA must name the olla-onnx binary}"
bin="${OLLA_BINARY_DIR:?OLLA_BINARY_DIR must point at the build tree}"
corpus="${OLLA_CORPUS:-$src/../shared/corpus}"
py=/usr/bin/python3
. "$src/tests/ort/ort_env.sh"
predict="${OLLA_ORT_PREDICT:-$bin/tests/ort_predict}"
ort_skip_unless_ready onnx counter
[ -x "$predict" ] || { echo "FAILED: no ort_predict at $predict"; exit 1; }
. "$src/tests/cli/lib.sh"
cli_tmp
work=$tmp

made="$work/made"
mkdir -p "$made"
"$py" "$ort/make_settings_models.py" "$made" || { echo "FAILED: make_settings_models.py"; exit 1; }
if [ -n "${OLLA_ORT_MEMORY_MODELS:-}" ]; then
  read -r -a models <<<"$OLLA_ORT_MEMORY_MODELS"
else
  models=()
  if [ -d "$corpus/infer" ]; then models+=("$corpus"/infer/*.onnx); else cli_missing "no corpus at $corpus/infer"; fi
  models+=("$src"/models/*.onnx)
  for m in steer bookkeeping nested_if loop scan loop_trip_input; do models+=("$made/$m.onnx"); done
  if [ -d "$corpus/onnx-node" ]; then  # a node whose op_type is If, Loop or Scan (NodeProto field 4)
    while read -r m; do models+=("$m"); done < <(LC_ALL=C grep -lP '\x22\x02If|\x22\x04Loop|\x22\x04Scan' \
      "$corpus"/onnx-node/*/model.onnx)
  fi
fi

# name MODEL: the file's name, or its folder's for onnx-node's model.onnx.
name_of() { local b; b="$(basename "$1" .onnx)"; [ "$b" = model ] && b="$(basename "$(dirname "$1")")"; echo "$b"; }
# optional MODEL: an onnx-node model, or written from one.
optional() { case "$1" in "$corpus"/onnx-node/*) return 0 ;; esac; grep -qxF "$1" "$work/optional.txt"; }

# Write every model at each batch with its report; list the cases and what to measure.
"$py" "$src/tests/tools/ort_settings_check.py" cases "${models[@]}" >"$work/models.tsv" ||
  { echo "FAILED: listing the models"; exit 1; }
: >"$work/cases.tsv"
: >"$work/optional.txt"
while IFS=$'\t' read -r model symbolic uses_batch; do
  name="$(name_of "$model")"
  for batch in 1 32; do
    [ "$batch" = 32 ] && [ "$symbolic" = 0 ] && continue
    dims=(); [ "$uses_batch" = 1 ] && dims=(--dim "batch=$batch")
    mkdir -p "$work/b$batch"
    out="$work/b$batch/$name.onnx"; rep="$work/b$batch/$name.json"
    if ! "$OLLA" -q --time-limit 20 "${dims[@]}" --report "$rep" "$model" "$out" 2>"$work/conv.err"; then
      if optional "$model"; then echo "skip: $name batch=$batch: olla-onnx cannot plan it: $(head -1 "$work/conv.err")"
      else bad "$name batch=$batch: olla-onnx: $(cat "$work/conv.err")"; fi
      continue
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rep" "$model" "$out" "$batch" >>"$work/cases.tsv"
    optional "$model" && echo "$out" >>"$work/optional.txt"
  done
done <"$work/models.tsv"
# What to measure at each batch: the inputs, and the written models that do
# not list the input's nodes in the input's order (the others run as their
# input does: the checker verifies the listing and uses the input's figures).
"$py" "$src/tests/tools/ort_settings_check.py" same-listing "$work/cases.tsv" >"$work/same.txt" ||
  { echo "FAILED: comparing listings"; exit 1; }
while IFS=$'\t' read -r name rep model out batch; do
  echo "$model" >>"$work/measure_b$batch.txt"
  grep -qxF "$out" "$work/same.txt" || echo "$out" >>"$work/measure_b$batch.txt"
done <"$work/cases.tsv"

# Measure: one process per batch, input and written models. When it dies
# (ONNX Runtime for Node crashes on some onnx-node models), the models it did
# not measure are measured one process each; a crash is then that model's skip.
measure_batch() {
  local batch="$1" out="$work/measured_b$1.jsonl" m rc
  # shellcheck disable=SC2046
  "$ort/measure.sh" --lib "$lib" $(cat "$work/measure_b$batch.txt") --dim "batch=$batch" --settings all \
    >"$out" 2>"$work/measure.err" && return 0
  for m in $(cat "$work/measure_b$batch.txt"); do
    grep -qF "\"model\":\"$m\"" "$out" && continue
    "$ort/measure.sh" --lib "$lib" "$m" --dim "batch=$batch" --settings all >"$work/one.jsonl" 2>/dev/null; rc=$?
    if [ "$rc" -eq 0 ]; then cat "$work/one.jsonl" >>"$out"
    else printf '{"model":"%s","skip":"%s"}\n' "$m" \
      "$( [ "$rc" -eq 77 ] && sed -n 's/^SKIP [^:]*: //p' "$work/one.jsonl" | tr -d '"\\' ||
          echo "the process measuring it ended with status $rc")" >>"$out"; fi
  done
}
measured=()
for batch in 1 32; do
  [ -s "$work/measure_b$batch.txt" ] || continue
  measure_batch "$batch"
  measured+=("$batch=$work/measured_b$batch.jsonl")
done
# A skip outside onnx-node is a failure.
while read -r model; do
  optional "$model" || bad "ONNX Runtime cannot run $(name_of "$model"): $(grep -hF "\"model\":\"$model\"" "${measured[@]#*=}" | head -1)"
done < <(cat "${measured[@]#*=}" /dev/null | "$py" -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{") and "skip" in json.loads(line):
        print(json.loads(line)["model"])' | sort -u)

counted="nested_if,loop,scan"; noted="loop_trip_input=trip count"
[ -n "${OLLA_ORT_MEMORY_MODELS:-}" ] && counted="" && noted=""
check() {
  "$py" "$src/tests/tools/ort_settings_check.py" "$work/cases.tsv" "${measured[@]}" \
    ${counted:+--counted "$counted"} ${noted:+--noted "$noted"} "$@" >"$work/check.out"
}
check --retry "$work/retry.tsv"; rc=$?
# Figures that missed are measured once more, in a fresh process per batch
# (Node's own blocks sometimes fall into a window; a model error repeats).
if [ "$rc" -ne 0 ] && [ -s "$work/retry.tsv" ]; then
  for batch in 1 32; do
    again="$(awk -F'\t' -v b="$batch" '$1 == b {print $2}' "$work/retry.tsv" | sort -u)"
    [ -n "$again" ] || continue
    echo "note: measuring again at batch $batch: $(for m in $again; do basename "$m"; done | tr '\n' ' ')"
    # shellcheck disable=SC2086
    "$ort/measure.sh" --lib "$lib" $again --dim "batch=$batch" --settings all 2>/dev/null |
      grep '^{' >>"$work/measured_b$batch.jsonl"
  done
  check; rc=$?
fi
grep -E "^(FAILED|skip)" "$work/check.out"
grep -c "^ok" "$work/check.out" | sed 's/^/ok: /; s/$/ checks of reports against the process/'
tail -1 "$work/check.out"
[ "$rc" -eq 0 ] && ok || bad "tests/tools/ort_settings_check.py: the reports and the process differ (above)"

# The bookkeeping model needs the bookkeeping: the tensors alone miss.
if [ -z "${OLLA_ORT_MEMORY_MODELS:-}" ]; then
  meas="$(grep -F "\"model\":\"$made/bookkeeping.onnx\",\"arena\":false,\"pattern\":true" "$work/measured_b1.jsonl" |
          sed -n 's/.*"first_run_bytes":\([0-9]*\).*/\1/p')"
  bare="$(json_int predicted_peak_bytes "$("$predict" "$made/bookkeeping.onnx" --tensors-only 2>&1)")"
  if [ -z "$meas" ] || [ -z "$bare" ]; then bad "bookkeeping: measured '$meas', tensors alone '$bare'"
  else
    miss=$((meas - bare)); [ "$miss" -lt 0 ] && miss=$((-miss))
    [ $((miss * 200)) -gt "$meas" ] && ok "bookkeeping: the tensors alone miss by $miss bytes: the bookkeeping counts" ||
      bad "bookkeeping: the tensors alone ($bare) are within 0.5% of $meas: the model does not exercise the bookkeeping"
  fi
fi

cli_finish "ort memory corpus"
