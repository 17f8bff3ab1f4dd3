#!/usr/bin/env bash
# What a plan holds for: the bindings it records ("dims", "inputs"), check
# using them by default and saying when --dim replaces them, and
# --input-shape (convert, check, shapes, batch) with its usage errors. The
# corpus part is skipped when the corpus is absent; the small models are made
# here by /usr/bin/python3 with onnx.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?}
export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-2}
PY=/usr/bin/python3
CORPUS=${OLLA_CORPUS:-}
cli_tmp
cli_need_python onnx

# ---- every model of corpus/infer and ort-training: plan with --dim, check with no flags
if [ -n "$CORPUS" ] && [ -d "$CORPUS/infer" ]; then
  for f in "$CORPUS"/infer/*.onnx "$CORPUS"/ort-training/*.onnx; do
    name=$(basename "$f" .onnx)
    dims=$($PY - "$f" <<'PY'
import sys, onnx
m = onnx.load(sys.argv[1])
names = sorted({d.dim_param for i in m.graph.input if i.type.HasField('tensor_type')
                for d in i.type.tensor_type.shape.dim if d.dim_param})
print(' '.join(f'--dim {n}=2' for n in names))
PY
)
    # shellcheck disable=SC2086
    if ! "$OLLA" -q $dims "$f" "$tmp/$name.onnx" 2>"$tmp/err"; then bad "$name: plan with '$dims' failed: $(cat "$tmp/err")"; continue; fi
    if "$OLLA" check "$tmp/$name.onnx" >"$tmp/out" 2>"$tmp/err"; then ok; else bad "$name: check with no flags: $(cat "$tmp/err")"; fi
    if [ -n "$dims" ]; then
      d=${dims%% *}; d=$(echo "$dims" | sed 's/.*--dim \([^=]*\)=2.*/\1/')
      # large enough that no tensor's size still rounds to the same aligned bytes
      "$OLLA" check --dim "$d=1000" "$tmp/$name.onnx" >"$tmp/out" 2>"$tmp/err"; rc=$?
      [ $rc -eq 1 ] && ok || bad "$name: check --dim $d=1000: exit $rc, wanted 1"
      grep -q "^olla-onnx check: --dim $d=1000 replaces the plan's $d=2$" "$tmp/err" && ok || bad "$name: no note that --dim replaces the plan's: $(cat "$tmp/err")"
      grep -q "the plan was made for $d=2; this check binds $d=1000 (" "$tmp/err" && ok || bad "$name: message lacks the cause: $(cat "$tmp/err")"
      "$OLLA" check --dim "$d=2" "$tmp/$name.onnx" >/dev/null 2>"$tmp/err" && [ ! -s "$tmp/err" ] && ok \
        || bad "$name: check with the plan's own --dim: $(cat "$tmp/err")"
    fi
  done
else
  echo "corpus absent: corpus checks skipped"
fi

# ---- --input-shape: an input with no shape, an input with -1
$PY - "$tmp" <<'PY'
import sys, onnx
from onnx import helper, TensorProto as T
out = sys.argv[1]
def save(name, q_shape, r_shape):
    nodes = [helper.make_node('Relu', ['q'], ['a']), helper.make_node('Add', ['a', 'r'], ['b'])]
    g = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('q', T.FLOAT, q_shape),
                                       helper.make_tensor_value_info('r', T.FLOAT, r_shape)],
                          [helper.make_tensor_value_info('b', T.FLOAT, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), f'{out}/{name}.onnx')
save('unshaped', None, [2, 4])
save('minus1', [-1, 4], [2, 4])
PY
U=$tmp/unshaped.onnx; N=$tmp/minus1.onnx
err=$("$OLLA" "$U" "$tmp/o.onnx" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *"unshaped.onnx: 2 tensors ('a', 'b') have no size: they depend on graph input 'q', whose shape is not declared; pass --input-shape q=D1,D2,... with its sizes" ]] \
  && ok || bad "unshaped input without the flag: exit $rc: $err"
err=$("$OLLA" "$N" "$tmp/o.onnx" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *"minus1.onnx: 1 tensor ('a') has no size: it depends on graph input 'q', whose dimension D1 has no value; pass --input-shape q=D1,4 with a size in place of each name" ]] \
  && ok || bad "-1 input without the flag: exit $rc: $err"
for m in unshaped minus1; do
  "$OLLA" -q --align 1 --input-shape q=2,4 "$tmp/$m.onnx" "$tmp/$m.planned.onnx" 2>"$tmp/err" && ok || bad "$m: --input-shape q=2,4: $(cat "$tmp/err")"
  "$OLLA" check "$tmp/$m.planned.onnx" >/dev/null 2>"$tmp/err" && ok || bad "$m: check of the planned model: $(cat "$tmp/err")"
  $PY - "$tmp/$m.planned.onnx" <<'PY' && ok || bad "$m: the plan records the wrong input shapes"
import sys, json, onnx
p = json.loads({x.key: x.value for x in onnx.load(sys.argv[1]).metadata_props}['olla.plan'])
sys.exit(0 if p['inputs'] == {'q': [2, 4], 'r': [2, 4]} and p['dims'] == {} and
         {t['name']: t['bytes'] for t in p['tensors']} == {'a': 32, 'b': 32} else 1)
PY
  "$OLLA" shapes --input-shape q=2,4 "$tmp/$m.onnx" >"$tmp/out" 2>"$tmp/err" && grep -q '"unknown":\[\]' "$tmp/out" \
    && grep -q '{"name":"q","dtype":"float32","shape":\[2,4\],"bytes":32,"source":"input"}' "$tmp/out" \
    && ok || bad "$m: shapes --input-shape: $(cat "$tmp/out" "$tmp/err")"
done
# planning a planned model again with other shapes replaces what it records
"$OLLA" -q --input-shape q=3,4 --input-shape r=3,4 "$tmp/unshaped.planned.onnx" "$tmp/replanned.onnx" 2>"$tmp/err" \
  && $PY - "$tmp/replanned.onnx" <<'PY' && ok || bad "replanned: the plan still records the old shapes: $(cat "$tmp/err")"
import sys, json, onnx
props = [x for x in onnx.load(sys.argv[1]).metadata_props if x.key == 'olla.plan']
sys.exit(0 if len(props) == 1 and json.loads(props[0].value)['inputs'] == {'q': [3, 4], 'r': [3, 4]} else 1)
PY
# an empty or -1 dimension stays unknown, and the error still names the flag
err=$("$OLLA" --input-shape q=2, "$U" "$tmp/o.onnx" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *"it depends on graph input 'q', whose dimension D2 has no value; pass --input-shape q=2,D2 with a size in place of each name" ]] \
  && ok || bad "--input-shape q=2, : exit $rc: $err"
err=$("$OLLA" --input-shape q=-1,4 "$U" "$tmp/o.onnx" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *"whose dimension D1 has no value; pass --input-shape q=D1,4 with a size in place of each name" ]] && ok || bad "--input-shape q=-1,4: exit $rc: $err"
# check --input-shape replaces the recorded shape of its input, says so when it differs, keeps the others
"$OLLA" check --input-shape q=2,4 --input-shape r=2,4 "$tmp/unshaped.planned.onnx" >/dev/null 2>"$tmp/err" \
  && [ ! -s "$tmp/err" ] && ok || bad "check with the recorded --input-shape: $(cat "$tmp/err")"
"$OLLA" check --input-shape q=3,4 "$tmp/unshaped.planned.onnx" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -qx "olla-onnx check: --input-shape q=3,4 replaces the plan's q=2,4" "$tmp/err" \
  && [ "$(grep -c 'replaces' "$tmp/err")" -eq 1 ] && ok || bad "check --input-shape q=3,4: exit $rc: $(cat "$tmp/err")"
# batch passes --input-shape to every conversion
mkdir -p "$tmp/in" && cp "$U" "$tmp/in/"
"$OLLA" batch -q --input-shape q=2,4 "$tmp/in" "$tmp/bout" >/dev/null 2>"$tmp/err" && "$OLLA" check "$tmp/bout/unshaped.onnx" >/dev/null 2>&1 \
  && ok || bad "batch --input-shape: $(cat "$tmp/err")"

# ---- bad --input-shape: one line, exit 2, no output (convert, shapes, check, batch)
usage_error() { # description, expected text, command...
  local what=$1 want=$2; shift 2
  rm -f "$tmp/o.onnx"
  local err; err=$("$@" 2>&1 >/dev/null); local rc=$?
  [ $rc -eq 2 ] || { bad "$what: exit $rc, wanted 2: $err"; return; }
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { bad "$what: not one line: $err"; return; }
  [[ "$err" == *"$want"* ]] || { bad "$what: message: $err"; return; }
  [ ! -e "$tmp/o.onnx" ] || { bad "$what: wrote an output"; return; }
  ok
}
usage_error "unknown name" "olla-onnx: --input-shape names 'zz', which is not a graph input of the model" \
  "$OLLA" --input-shape zz=2,4 "$U" "$tmp/o.onnx"
usage_error "wrong rank" "olla-onnx: --input-shape r has 3 dimensions but the model declares float32[2,4]" \
  "$OLLA" --input-shape r=2,4,1 "$U" "$tmp/o.onnx"
usage_error "negative" "olla-onnx: --input-shape q: dimension 1 is '-4'; give sizes >= 0, or -1 or nothing for unknown" \
  "$OLLA" --input-shape q=2,-4 "$U" "$tmp/o.onnx"
usage_error "not a number" "olla-onnx: --input-shape q: dimension 0 is 'x'" "$OLLA" --input-shape q=x "$U" "$tmp/o.onnx"
usage_error "no NAME=" "olla-onnx: --input-shape needs NAME=D1,D2,..." "$OLLA" --input-shape 2,4 "$U" "$tmp/o.onnx"
usage_error "given twice" "olla-onnx: --input-shape q is given twice" "$OLLA" --input-shape q=2,4 --input-shape q=2,4 "$U" "$tmp/o.onnx"
usage_error "shapes: unknown name" "olla-onnx shapes: --input-shape names 'zz'" "$OLLA" shapes --input-shape zz=1 "$U"
usage_error "shapes: negative" "olla-onnx shapes: --input-shape q: dimension 0 is '-2'" "$OLLA" shapes --input-shape q=-2 "$U"
usage_error "check: wrong rank" "olla-onnx check: " "$OLLA" check --input-shape r=4 "$tmp/unshaped.planned.onnx"
"$OLLA" batch -q --input-shape q=-3 "$tmp/in" "$tmp/bout2" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || bad "batch bad --input-shape: exit $rc: $(cat "$tmp/err")"

cli_finish "bindings"
