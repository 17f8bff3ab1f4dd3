#!/usr/bin/env bash
# Declared types win over inferred ones, the checker compares every planned
# tensor with the model's declarations, and --strict-shapes turns every
# disagreement into an error (convert, check, shapes, batch). The models are
# made here by /usr/bin/python3 with onnx: an ONNX Runtime optimizer graph
# (one AdamWOptimizer node) as training artifacts have it.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?}
PY=/usr/bin/python3
cli_tmp
cli_need_python onnx

$PY - "$tmp" <<'PY'
import sys, onnx
from onnx import helper, TensorProto as T
out = sys.argv[1]
def seq(name):
    return helper.make_tensor_sequence_value_info(name, T.FLOAT, None)
def model(flag_type):
    node = helper.make_node('AdamWOptimizer', ['lr', 'step', 'w', 'g', 'm1', 'm2'], ['updated_flag'],
                            name='adamw', domain='com.microsoft', adam_mode=1)
    g = helper.make_graph([node], 'optimizer',
        [helper.make_tensor_value_info('lr', T.FLOAT, [1]), helper.make_tensor_value_info('step', T.INT64, [1]),
         seq('w'), seq('g'), seq('m1'), seq('m2')],
        [helper.make_tensor_value_info('updated_flag', flag_type, [1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 17), helper.make_opsetid('com.microsoft', 1)])
onnx.save(model(T.INT64), f'{out}/adamw_int64.onnx')
onnx.save(model(T.BOOL), f'{out}/adamw_bool.onnx')
PY

# plan bytes of a tensor in a planned model
plan_bytes() {
  $PY - "$1" "$2" <<'PY'
import sys, json, onnx
m = onnx.load(sys.argv[1])
plan = json.loads({p.key: p.value for p in m.metadata_props}['olla.plan'])
print([t['bytes'] for t in plan['tensors'] if t['name'] == sys.argv[2]][0])
PY
}

# 1. updated_flag is int64[1] by ORT's schema and by the declaration: 8 bytes
"$OLLA" -q --align 1 "$tmp/adamw_int64.onnx" "$tmp/p64.onnx" 2>"$tmp/err"
[ $? -eq 0 ] && ok || bad "int64 artifact: plan failed: $(cat "$tmp/err")"
b=$(plan_bytes "$tmp/p64.onnx" updated_flag)
[ "$b" = 8 ] && ok || bad "int64 artifact: updated_flag planned with $b bytes, wanted 8"
"$OLLA" check "$tmp/p64.onnx" >/dev/null 2>&1 && ok || bad "int64 artifact: check of its own plan failed"

# 2. a plan under-sizing a declared tensor is refused by check
$PY - "$tmp/p64.onnx" "$tmp/tampered.onnx" <<'PY'
import sys, json, onnx
m = onnx.load(sys.argv[1])
for p in m.metadata_props:
    if p.key == 'olla.plan':
        plan = json.loads(p.value)
        plan['tensors'][0]['bytes'] = 1
        plan['arena_bytes'] = 1
        p.value = json.dumps(plan)
    elif p.key == 'olla.arena_bytes':
        p.value = '1'
onnx.save(m, sys.argv[2])
PY
err=$("$OLLA" check "$tmp/tampered.onnx" 2>&1); rc=$?
[ $rc -eq 1 ] && ok || bad "tampered plan: check exit $rc, wanted 1"
case "$err" in
  *"the plan gives 'updated_flag' 1 byte but the model declares it int64[1], 8 bytes"*) ok ;;
  *) bad "tampered plan: message: $err" ;;
esac

# 3. a declaration that disagrees with ORT's schema: declared bool[1] wins, with a warning
"$OLLA" --align 1 "$tmp/adamw_bool.onnx" "$tmp/pb.onnx" 2>"$tmp/err"
[ $? -eq 0 ] && ok || bad "bool artifact: plan failed: $(cat "$tmp/err")"
grep -q "warning: 'updated_flag' (node 'adamw', AdamWOptimizer): inferred int64\[1\] but the model declares bool\[1\]; using bool\[1\] as declared (1 byte where the inferred type has 8)" "$tmp/err" \
  && ok || bad "bool artifact: no warning naming node, operator and both types: $(cat "$tmp/err")"
b=$(plan_bytes "$tmp/pb.onnx" updated_flag)
[ "$b" = 1 ] && ok || bad "bool artifact: updated_flag planned with $b bytes, wanted the declared 1"
"$OLLA" check "$tmp/pb.onnx" >/dev/null 2>&1 && ok || bad "bool artifact: check failed"

# 4. --strict-shapes: every disagreement is a one-line error, exit 1, no output
strict_msg="'updated_flag' (node 'adamw', AdamWOptimizer): inferred int64[1] but the model declares bool[1]"
one_error() { # description, expected exit, command...
  local what=$1 want=$2; shift 2
  local err; err=$("$@" 2>&1 >/dev/null); local rc=$?
  [ $rc -eq "$want" ] || { bad "$what: exit $rc, wanted $want: $err"; return; }
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { bad "$what: not one line: $err"; return; }
  case "$err" in *"$strict_msg"*"--strict-shapes"*) ok ;; *) bad "$what: message: $err" ;; esac
}
rm -f "$tmp/s.onnx"
one_error "convert --strict-shapes" 1 "$OLLA" --strict-shapes "$tmp/adamw_bool.onnx" "$tmp/s.onnx"
[ ! -e "$tmp/s.onnx" ] && ok || bad "convert --strict-shapes wrote an output"
one_error "shapes --strict-shapes" 1 "$OLLA" shapes --strict-shapes "$tmp/adamw_bool.onnx"
one_error "check --strict-shapes" 1 "$OLLA" check --strict-shapes "$tmp/pb.onnx"
"$OLLA" shapes --strict-shapes "$tmp/adamw_int64.onnx" >/dev/null 2>&1 && ok || bad "shapes --strict-shapes on an agreeing model failed"
mkdir -p "$tmp/in" && cp "$tmp/adamw_bool.onnx" "$tmp/in/"
"$OLLA" batch -q --strict-shapes --report "$tmp/r.jsonl" "$tmp/in" "$tmp/out" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && ok || bad "batch --strict-shapes: exit $rc, wanted 1"
grep -q '"status":"failed"' "$tmp/r.jsonl" && grep -q "strict-shapes" "$tmp/r.jsonl" && ok \
  || bad "batch --strict-shapes: report: $(cat "$tmp/r.jsonl")"

cli_finish "declared"
