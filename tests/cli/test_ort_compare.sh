#!/usr/bin/env bash
# The ONNX Runtime equivalence check itself (tests/ort/compare.mjs): a model
# against itself and against copies whose nodes are listed in another valid
# topological order must PASS; a copy with one weight changed by one ulp must
# FAIL naming the output; a model ORT cannot load must SKIP (exit 77), never
# pass; usage and interface errors are reported.
# Needs node, tests/ort/node_modules (scripts/setup_ort.sh) and /usr/bin/python3
# with onnx; exits 77 (skipped) without them.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
py=/usr/bin/python3
. "$src/tests/ort/ort_env.sh"
ort_skip_unless_ready onnx
. "$src/tests/cli/lib.sh"
cli_tmp
work=$tmp

# expect CODE PATTERN -- compare args...: exit code and a line of output
expect() {
  local code="$1" pattern="$2"; shift 3
  local out rc
  out="$(node "$ort/compare.mjs" "$@" 2>&1)"; rc=$?
  if [ "$rc" -ne "$code" ]; then bad "compare.mjs $* exited $rc, expected $code: $out"; return; fi
  if ! grep -qE -- "$pattern" <<<"$out"; then bad "compare.mjs $*: output lacks /$pattern/: $out"; return; fi
  ok "compare.mjs $* -> $rc"
}

# permute IN OUT SEED: a permuted copy that really moved nodes
permute() {
  local msg
  msg="$("$py" "$src/scripts/permute_nodes.py" "$1" "$2" --seed "$3" 2>&1)" || { bad "permute_nodes.py $1: $msg"; return 1; }
  if grep -qE ': 0 of [0-9]+ nodes moved' <<<"$msg"; then bad "permute_nodes.py $1 moved no node: $msg"; return 1; fi
}

m="$src/models"
for name in infer_small mlp_train cnn_train if_loop unordered; do
  expect 0 "^PASS .*$name.onnx: [0-9]+ outputs identical" -- "$m/$name.onnx" "$m/$name.onnx"
  permute "$m/$name.onnx" "$work/$name.perm.onnx" 5 &&
    expect 0 "^PASS .*$name.onnx: [0-9]+ outputs identical" -- "$m/$name.onnx" "$work/$name.perm.onnx"
done
expect 0 "^PASS .*mlp_train.onnx: 9 outputs identical" -- "$m/mlp_train.onnx" "$m/mlp_train.onnx" --seed 12345
expect 0 "^PASS .*multi_output.onnx: 4 outputs identical" -- "$m/multi_output.onnx" "$m/multi_output.onnx"
expect 0 "^PASS .*external_data.onnx: 1 outputs identical" -- "$m/external_data.onnx" "$m/external_data.onnx"

# Symbolic dimensions: bound by --dim, else 1 and reported.
expect 0 "^PASS .*symbolic_dims.onnx" -- "$m/symbolic_dims.onnx" "$m/symbolic_dims.onnx" --dim batch=3
expect 0 "dimension 'batch' is not bound by --dim; using 1" -- "$m/symbolic_dims.onnx" "$m/symbolic_dims.onnx"

# One-ulp changes are caught and the output is named.
"$py" "$src/scripts/alter_initializer.py" "$m/infer_small.onnx" "$work/infer_small.alt.onnx" --name stem_W 2>/dev/null ||
  bad "alter_initializer.py infer_small"
expect 1 "^FAIL .*: output 'y' differs" -- "$m/infer_small.onnx" "$work/infer_small.alt.onnx"
"$py" "$src/scripts/alter_initializer.py" "$m/mlp_train.onnx" "$work/mlp_train.alt.onnx" --name lr 2>/dev/null ||
  bad "alter_initializer.py mlp_train"
expect 1 "^FAIL .*: output 'W0_new' differs" -- "$m/mlp_train.onnx" "$work/mlp_train.alt.onnx"
# ... and also when only the permuted side is altered.
if [ -f "$work/infer_small.perm.onnx" ]; then
  "$py" "$src/scripts/alter_initializer.py" "$work/infer_small.perm.onnx" "$work/infer_small.perm.alt.onnx" \
    --name c_W 2>/dev/null || bad "alter_initializer.py infer_small.perm"
  expect 1 "^FAIL .*: output 'y' differs" -- "$m/infer_small.onnx" "$work/infer_small.perm.alt.onnx"
fi

# A model ORT cannot load is skipped, never passed.
expect 77 "^SKIP .*unsized_op.onnx: ONNX Runtime cannot load it" -- "$m/bad/unsized_op.onnx" "$m/bad/unsized_op.onnx"
expect 77 "^SKIP .*not_onnx.onnx" -- "$m/bad/not_onnx.onnx" "$m/infer_small.onnx"
# B broken while A runs: a failure.
expect 1 "^FAIL .*truncated.onnx: ONNX Runtime cannot load it although it loads" -- "$m/infer_small.onnx" "$m/bad/truncated.onnx"
# Different interfaces.
expect 1 "^FAIL .*: input 'x' is float32\[8,128\] here but float32\[1,3,16,16\]" -- "$m/infer_small.onnx" "$m/mlp_train.onnx"
# Usage errors.
expect 2 "give exactly two model files" -- "$m/infer_small.onnx"
expect 2 "cannot open .*nope.onnx" -- "$m/infer_small.onnx" "$work/nope.onnx"
expect 2 "--dim takes name=value" -- "$m/infer_small.onnx" "$m/infer_small.onnx" --dim batch

# The exported inference models of the corpus (weights are graph inputs,
# symbolic batch).
if [ -n "${OLLA_CORPUS:-}" ] && [ -d "$OLLA_CORPUS/infer" ]; then
  for f in "$OLLA_CORPUS"/infer/*.onnx; do
    name="$(basename "$f" .onnx)"
    expect 0 "^PASS .*$name.onnx: 1 outputs identical" -- "$f" "$f" --dim batch=2
    "$py" "$src/scripts/permute_nodes.py" "$f" "$work/$name.perm.onnx" --seed 5 2>/dev/null || bad "permute $f"
    expect 0 "^PASS .*$name.onnx: 1 outputs identical" -- "$f" "$work/$name.perm.onnx" --dim batch=2
  done
else
  cli_missing "no corpus at '${OLLA_CORPUS:-}/infer' (OLLA_CORPUS): corpus models not compared"
fi

# The driver tests/cli/test_ort.sh, with stand-in converters.
# driver CODE PATTERN MODELS CONVERTER: exit code, and PATTERN matched against
# the whole output joined into one line
driver() {
  local code="$1" pattern="$2" out rc
  out="$(OLLA_ORT_MODELS="$3" OLLA_ORT_CONVERTER="$4" bash "$src/tests/cli/test_ort.sh" 2>&1)"; rc=$?
  if [ "$rc" -ne "$code" ]; then bad "test_ort.sh with '$4' on '$3' exited $rc, expected $code: $out"; return; fi
  if ! tr '\n' ' ' <<<"$out" | grep -qE -- "$pattern"; then
    bad "test_ort.sh with '$4': output lacks /$pattern/: $out"; return
  fi
  ok "test_ort.sh with '$4' -> $rc"
}
permuter="$py $src/scripts/permute_nodes.py {in} {out} --seed 3"
driver 0 "ort: 3 passed, 1 skipped, 0 failed $" \
  "$m/infer_small.onnx $m/symbolic_dims.onnx $m/external_data.onnx $m/bad/unsized_op.onnx" "$permuter"
driver 1 "^FAIL .*output 'y' differs.* ort: 0 passed, 0 skipped, 1 failed $" \
  "$m/infer_small.onnx" "$py $src/scripts/alter_initializer.py {in} {out}"
printf '%s\n' "$m/infer_small.onnx" "$m/if_loop.onnx" >"$work/list.txt"
driver 0 "ort: 2 passed, 0 skipped, 0 failed $" "@$work/list.txt" "$permuter"
driver 1 "conversion failed" "$m/infer_small.onnx" "false {in} {out}"
driver 1 "wrote no" "$m/infer_small.onnx" "true {in} {out}"
driver 1 "no model was compared" "$m/bad/unsized_op.onnx" "$permuter"
# ONNX Runtime 1.30 crashes on a BatchNormalization in training mode whose
# middle output has an empty name: a crash on the original is a skip, a crash
# on the converted model only is a failure.
"$py" - "$m/multi_output.onnx" "$work/crash.onnx" <<'PY'
import sys, onnx
m = onnx.ModelProto.FromString(open(sys.argv[1], "rb").read())
bn = [n for n in m.graph.node if n.op_type == "BatchNormalization"][0]
bn.output[1] = ""
open(sys.argv[2], "wb").write(m.SerializeToString())
PY
node "$ort/compare.mjs" "$work/crash.onnx" "$work/crash.onnx" >/dev/null 2>&1
if [ $? -gt 128 ]; then
  driver 0 "SKIP .*crash.onnx: ONNX Runtime crashes on it \\(signal [0-9]+\\) ort: 1 passed, 1 skipped, 0 failed $" \
    "$m/infer_small.onnx $work/crash.onnx" "$permuter"
  driver 1 "crashes \(signal [0-9]+\) on the converted model but not on the original" \
    "$m/multi_output.onnx" "cp $work/crash.onnx {out}"
else
  echo "note: this ONNX Runtime does not crash on $work/crash.onnx; crash handling not exercised"
fi

cli_finish "ort compare"
