#!/usr/bin/env bash
# Independent check of the converter's peak figures: for every model of
# models/ and of $OLLA_CORPUS/infer, the report's input_order_peak_bytes must
# equal scripts/order_peak.py on the input (its listed order, or the stable
# topological order when the list is not one), and the report's peak_bytes
# must equal scripts/order_peak.py on the written model, whose node list is
# the planned order, with the buffer sharing its plan declares (--plan-shares).
# Sizes are rounded to the 64-byte alignment on both sides.
# Needs /usr/bin/python3 with onnx; exits 77 (skipped) without it.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
OLLA="${OLLA:?OLLA must name the olla-onnx binary}"
py=/usr/bin/python3
. "$src/tests/cli/lib.sh"
PY=$py cli_need_python onnx
cli_tmp
work=$tmp

models=("$src"/models/*.onnx)
if [ -n "${OLLA_CORPUS:-}" ] && [ -d "$OLLA_CORPUS/infer" ]; then
  models+=("$OLLA_CORPUS"/infer/*.onnx)
else
  cli_missing "no corpus at '${OLLA_CORPUS:-}/infer' (OLLA_CORPUS): only models/ is checked"
fi

peak_of() { # model, dims...: the peak order_peak.py reports
  "$py" "$src/scripts/order_peak.py" "$@" --align 64 --random 0 | grep -oE '[0-9]+ bytes' | tail -n 1 | cut -d' ' -f1
}

i=0
for in in "${models[@]}"; do
  i=$((i + 1))
  wd="$work/$i"; mkdir -p "$wd"
  for data in "$(dirname "$in")"/*.bin; do [ -e "$data" ] && cp "$data" "$wd/"; done
  dims=()
  if "$py" - "$in" <<'PY'
import sys, onnx
g = onnx.ModelProto.FromString(open(sys.argv[1], "rb").read()).graph
sys.exit(0 if any(d.dim_param == "batch" for v in g.input for d in v.type.tensor_type.shape.dim) else 1)
PY
  then dims=(--dim batch=2); fi
  if ! "$OLLA" -q --align 64 --time-limit 5 "${dims[@]}" --report "$wd/r.json" "$in" "$wd/out.onnx" >"$wd/log" 2>&1; then
    bad "$in: conversion failed: $(tail -n 1 "$wd/log")"; continue
  fi
  read -r olla_in olla_out < <("$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["input_order_peak_bytes"], r["peak_bytes"])' "$wd/r.json")
  py_in="$(peak_of "$in" "${dims[@]}")"
  py_out="$(peak_of "$wd/out.onnx" "${dims[@]}" --plan-shares)"
  if [ "$olla_in" = "$py_in" ] && [ "$olla_out" = "$py_out" ]; then
    ok "$in: input order $py_in bytes, planned order $py_out bytes"
  else
    bad "$in: report says input order $olla_in, planned $olla_out; order_peak.py says $py_in, $py_out"
  fi
done
cli_finish "peaks"
