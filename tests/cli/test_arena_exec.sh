#!/usr/bin/env bash
# The example runtime executes every planned model over its arena with no
# tensor overwritten while live, sharing buffers as the plan says (views and
# in-place writes), once planned with the runtime's sharing and once without;
# it catches a deliberately corrupted offset and a share the rules do not
# allow.
set -u
OLLA=${OLLA:?} ; EXEC=${OLLA_ARENA_EXEC:?} ; SRC=${OLLA_SOURCE_DIR:?}
. "$(dirname "$0")/lib.sh"
cli_tmp
cli_need_python onnx  # tests/tools/dim_names.py reads the models
models=("$SRC"/models/*.onnx)
if [ -d "${OLLA_CORPUS:-}" ]; then
  models+=("$OLLA_CORPUS"/train/*_bs1.onnx "$OLLA_CORPUS"/ort-training/*.onnx "$OLLA_CORPUS"/infer/*.onnx)
else
  cli_missing "no corpus at '${OLLA_CORPUS:-}' (OLLA_CORPUS): only models/ is run"
fi
shared=0 # plans that share at least one buffer
for m in "${models[@]}"; do
 for sharing in runtime none; do
  name=$(basename "$m" .onnx).$sharing
  # the usual names, each where the model declares it
  dims=$(/usr/bin/python3 "$SRC/tests/tools/dim_names.py" "$m" batch=2 batch_size=2 seq=3)
  # shellcheck disable=SC2086
  if ! "$OLLA" -q --sharing $sharing --time-limit 10 $dims "$m" "$tmp/$name.onnx" 2>"$tmp/err"; then
    bad "$name did not plan: $(cat "$tmp/err")"; continue
  fi
  grep -q '"sharing":"alias"\|"sharing":"inplace"' "$tmp/$name.onnx" && shared=$((shared+1))
  if "$EXEC" "$tmp/$name.onnx" >/dev/null 2>"$tmp/err"; then ok; else bad "$name: $(cat "$tmp/err")"; fi
  # a corrupted offset, and a share the rules do not allow, must be caught
  # (models with a node whose planned input is read again later)
  for how in --corrupt --corrupt-share; do
    if "$EXEC" $how "$tmp/$name.onnx" >/dev/null 2>"$tmp/err"; then
      bad "$name: $how went unnoticed"
    elif grep -q "nothing to corrupt" "$tmp/err"; then
      :
    else
      grep -q "was overwritten" "$tmp/err" && ok || bad "$name $how: $(cat "$tmp/err")"
    fi
  done
  rm -f "$tmp"/*.bin
 done
done
[ $shared -gt 5 ] && ok || bad "only $shared plans share a buffer"
cli_finish "arena-exec"
