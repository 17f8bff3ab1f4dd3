#!/usr/bin/env bash
# olla-onnx shapes: exit codes, JSON content, --dim and --no-value-info.
set -u
. "$(dirname "$0")/lib.sh"
cli_tmp
check() { # description, exit status of the condition
    [ "$2" = 0 ] && ok || bad "$1"
}

"$OLLA" shapes >"$tmp/out" 2>"$tmp/err"; check "no model: exit 2" $([ $? = 2 ]; echo $?)
"$OLLA" shapes --dim batch x.onnx >"$tmp/out" 2>"$tmp/err"; check "bad --dim: exit 2" $([ $? = 2 ]; echo $?)
grep -q "NAME=VALUE" "$tmp/err"; check "bad --dim message" $?
"$OLLA" shapes --frobnicate x.onnx >"$tmp/out" 2>"$tmp/err"; check "unknown option: exit 2" $([ $? = 2 ]; echo $?)
"$OLLA" shapes "$tmp/missing.onnx" >"$tmp/out" 2>"$tmp/err"; check "missing file: exit 1" $([ $? = 1 ]; echo $?)
check "missing file: one line" $([ "$(wc -l <"$tmp/err")" = 1 ]; echo $?)
printf 'not a model at all' >"$tmp/bad.onnx"
"$OLLA" shapes "$tmp/bad.onnx" >"$tmp/out" 2>"$tmp/err"; check "garbage: exit 1" $([ $? = 1 ]; echo $?)
check "garbage: nothing on stdout" $([ ! -s "$tmp/out" ]; echo $?)

# With the shared corpus: a node test and a model with a symbolic batch.
# Without it these checks cannot run and the test is skipped (77) once the
# others pass; a corpus present but lacking either model is a failure.
corpus=${OLLA_CORPUS:-}
node=$corpus/onnx-node/test_add_bcast/model.onnx
model=$corpus/infer/resnet18.onnx
no_corpus=""
if [ -z "$corpus" ] || [ ! -d "$corpus" ]; then
    no_corpus="no corpus at '${corpus}' (OLLA_CORPUS)"
elif [ ! -f "$node" ] || [ ! -f "$model" ]; then
    bad "the corpus at $corpus lacks $node or $model"
else
    "$OLLA" shapes --no-value-info "$node" >"$tmp/out"; check "add_bcast: exit 0" $?
    grep -q '{"name":"sum","dtype":"float32","shape":\[3,4,5\],"bytes":240,"source":"inferred"}' "$tmp/out"
    check "add_bcast: inferred output" $?
    grep -q '"unknown":\[\]' "$tmp/out"; check "add_bcast: nothing unknown" $?
    "$OLLA" shapes --no-value-info "$model" >"$tmp/sym"; check "resnet18: exit 0" $?
    grep -q '"shape":\["batch",' "$tmp/sym"; check "resnet18: symbolic batch kept" $?
    grep -q "pass --input-shape x=batch,3,224,224 with a size in place of each name, or --dim batch=N" "$tmp/sym"
    check "resnet18: reason names the --input-shape and the --dim" $?
    grep -q '"advice":"[0-9]* tensors (.*) have no size: they depend on graph input .x., whose dimension batch has no value; pass --input-shape x=batch,3,224,224 with a size in place of each name, or --dim batch=N"' "$tmp/sym"
    check "resnet18: the advice" $?
    "$OLLA" shapes --no-value-info --dim batch=2 "$model" >"$tmp/bound"; check "resnet18 bound: exit 0" $?
    grep -q '"unknown":\[\]' "$tmp/bound"; check "resnet18 bound: every tensor sized" $?
    grep -q '"bytes":null' "$tmp/bound"; check "resnet18 bound: no null bytes" $([ $? = 1 ]; echo $?)
fi
if [ -n "$no_corpus" ]; then cli_finish "shapes" "$no_corpus"; fi
cli_finish "shapes"
