#!/usr/bin/env bash
# The example runtime executes every planned model over its arena with no
# tensor overwritten while live, and catches a deliberately corrupted offset.
set -u
OLLA=${OLLA:?} ; EXEC=${OLLA_ARENA_EXEC:?} ; SRC=${OLLA_SOURCE_DIR:?}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
models=("$SRC"/models/*.onnx)
if [ -d "${OLLA_CORPUS:-}" ]; then
  models+=("$OLLA_CORPUS"/train/*_bs1.onnx "$OLLA_CORPUS"/ort-training/*.onnx "$OLLA_CORPUS"/infer/*.onnx)
fi
for m in "${models[@]}"; do
  name=$(basename "$m" .onnx)
  # the usual names, each where the model declares it
  dims=$(/usr/bin/python3 "$SRC/tests/tools/dim_names.py" "$m" batch=2 batch_size=2 seq=3)
  # shellcheck disable=SC2086
  if ! "$OLLA" -q --time-limit 10 $dims "$m" "$tmp/$name.onnx" 2>"$tmp/err"; then
    echo "FAIL: $name did not plan: $(cat "$tmp/err")"; fail=$((fail+1)); continue
  fi
  if "$EXEC" "$tmp/$name.onnx" >/dev/null 2>"$tmp/err"; then pass=$((pass+1)); else echo "FAIL: $name: $(cat "$tmp/err")"; fail=$((fail+1)); fi
  # a corrupted offset must be caught (models with a node whose input and output are both planned)
  if "$EXEC" --corrupt "$tmp/$name.onnx" >/dev/null 2>"$tmp/err"; then
    if grep -q "corrupting" "$tmp/err"; then echo "FAIL: $name: corruption went unnoticed"; fail=$((fail+1)); fi
  else
    grep -q "was overwritten" "$tmp/err" && pass=$((pass+1)) || { echo "FAIL: $name corrupt: $(cat "$tmp/err")"; fail=$((fail+1)); }
  fi
  rm -f "$tmp"/*.bin
done
echo "arena-exec: $pass passed, $fail failed"
[ $fail -eq 0 ]
