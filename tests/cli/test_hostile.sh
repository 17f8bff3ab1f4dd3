#!/usr/bin/env bash
# Hostile input: every bad model gives exit code 1, the exact one-line
# message, and no output file; corrupted models never crash the tool.
# The models are made here (by /usr/bin/python3 with onnx, or byte by byte).
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-2} ; SRC=${OLLA_SOURCE_DIR:?}
PY=/usr/bin/python3
cli_tmp
# expect FILE "exact message" [options...]: exit 1, exactly "olla-onnx: MESSAGE", no output
expect() {
  local f=$1 msg=$2; shift 2
  rm -f "$tmp/out.onnx"
  local err; err=$("$OLLA" "$@" "$f" "$tmp/out.onnx" 2>&1 >/dev/null); local rc=$?
  if [ $rc -ne 1 ]; then bad "$(basename "$f"): exit $rc, wanted 1: $err"; return; fi
  if [ "$err" != "olla-onnx: $msg" ]; then bad "$(basename "$f"): message
   got:    $err
   wanted: olla-onnx: $msg"; return; fi
  if ls "$tmp" | grep -q '^out\.onnx'; then bad "$(basename "$f"): left an output file"; return; fi
  ok
}
cli_need_python onnx

# ---- a reference reading of the top level of the protobuf wire format,
# written from the format's specification: the error a loader must report
# for bytes that break it at the top level ("" when the top level is fine)
cat >"$tmp/wire_ref.py" <<'PY'
import sys
def varint(d, p):
    v = 0
    for i in range(10):
        if p + i >= len(d):
            return None, p
        v |= (d[p + i] & 0x7f) << (7 * i)
        if not d[p + i] & 0x80:
            return v, p + i + 1
    return 'bad', p
def expect(d):
    if not d:
        return "not an ONNX model: the file is empty"
    p, known = 0, 0
    while p < len(d):
        s = p
        k, p = varint(d, p)
        if k is None:
            return f"truncated: a field key at byte {s} in the model runs past the end"
        if k == 'bad' or k >> 3 == 0:
            return f"{'not an ONNX model' if s == 0 else 'malformed model'}: invalid protobuf field key at byte {s} in the model"
        f, wt = k >> 3, k & 7
        if wt == 0:
            v, q = varint(d, p)
            if v is None:
                return f"truncated: field {f} at byte {s} in the model runs past the end"
            if v == 'bad':
                return f"malformed model: bad varint at byte {p} in the model"
            p = q
        elif wt in (1, 5):
            w = 8 if wt == 1 else 4
            if len(d) - p < w:
                return f"truncated: field {f} at byte {s} in the model runs past the end"
            p += w
        elif wt == 2:
            n, q = varint(d, p)
            if n is None:
                return f"truncated: field {f} at byte {s} in the model runs past the end"
            if n == 'bad':
                return f"malformed model: bad length at byte {p} in the model"
            p = q
            if n > len(d) - p:
                return f"truncated: field {f} at byte {s} in the model needs {n} bytes, only {len(d) - p} remain in the file"
            if f in (7, 20, 25):
                return ""  # a graph, training info or function: nested, not judged here
            p += n
        else:
            return f"{'not an ONNX model' if known == 0 else 'malformed model'}: unsupported protobuf wire type {wt} at byte {s} in the model"
        if f in (1, 7, 8):
            known += 1
    return "" if known else "not an ONNX model: no ir_version, opset_import or graph field found"
print(expect(open(sys.argv[1], 'rb').read()))
PY

# ---- random bytes, several seeds and lengths
for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
  f=$tmp/random_$seed.onnx
  $PY -c "import random,sys; r=random.Random($seed); sys.stdout.buffer.write(r.randbytes(r.choice([1,7,100,4096,65536])))" >"$f"
  want=$($PY "$tmp/wire_ref.py" "$f")
  if [ -n "$want" ]; then expect "$f" "$f: $want"; else
    rm -f "$tmp/out.onnx"; err=$("$OLLA" "$f" "$tmp/out.onnx" 2>&1); rc=$?
    [ $rc -eq 1 ] && [ ! -e "$tmp/out.onnx" ] && [ "$(wc -l <<<"$err")" -eq 1 ] && ok || bad "random seed $seed: rc=$rc $err"
  fi
done

# ---- truncation at every 1/16th of a real model
M=$SRC/models/mlp_train.onnx
size=$(stat -c %s "$M")
for k in $(seq 0 15); do
  cut=$((size * k / 16))
  f=$tmp/cut_$k.onnx
  head -c $cut "$M" >"$f"
  want=$($PY "$tmp/wire_ref.py" "$f")
  [ -n "$want" ] || { bad "cut at $cut: the reference finds the top level whole"; continue; }
  expect "$f" "$f: $want"
done

# ---- bit flips: exit 0 (and the output passes check) or 1 (one line, no output), nothing else
FLIPS=${OLLA_HOSTILE_FLIPS:-160}
$PY - "$M" "$tmp/flips" "$FLIPS" <<'PY'
import os, random, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src, 'rb').read()
os.makedirs(out)
r = random.Random(2024)
for i in range(n):
    d = bytearray(data)
    for _ in range(r.choice([1, 1, 2, 3, 8])):
        p = r.randrange(len(d))
        d[p] ^= 1 << r.randrange(8)
    open(f'{out}/flip_{i:03d}.onnx', 'wb').write(d)
PY
n0=0; n1=0
for f in "$tmp"/flips/*.onnx; do
  rm -f "$tmp/out.onnx"
  err=$("$OLLA" -q --time-limit 1 "$f" "$tmp/out.onnx" 2>&1); rc=$?
  if [ $rc -eq 0 ]; then
    if "$OLLA" check "$tmp/out.onnx" >/dev/null 2>&1; then n0=$((n0+1)); else bad "$(basename "$f"): planned but the output fails check"; fi
  elif [ $rc -eq 1 ]; then
    if [ -e "$tmp/out.onnx" ]; then bad "$(basename "$f"): exit 1 but an output file exists"
    elif [ "$(wc -l <<<"$err")" -ne 1 ] || [ "${err#olla-onnx: }" = "$err" ]; then bad "$(basename "$f"): not one 'olla-onnx:' line: $err"
    else n1=$((n1+1)); fi
  else
    bad "$(basename "$f"): exit $rc: $err"
  fi
done
[ $((n0 + n1)) -eq "$FLIPS" ] && ok
echo "bit flips: $n0 planned, $n1 refused"
rm -rf "$tmp/flips"

# ---- models with one thing wrong, made with onnx
mkdir -p "$tmp/h/sub"
(cd "$tmp/h" && $PY - <<'PY'
from onnx import helper as h, TensorProto as T
vi = h.make_tensor_value_info
def save(name, nodes, inputs, outputs, value_info=(), inits=(), extra_opsets=()):
    g = h.make_graph(nodes, 'g', inputs, outputs, initializer=list(inits), value_info=list(value_info))
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)] + [h.make_opsetid(d, 1) for d in extra_opsets])
    m.ir_version = 8
    open(name, 'wb').write(m.SerializeToString())
H = ('com.hostile',)
# dimensions whose byte size overflows 64 bits
save('overflow_input.onnx', [h.make_node('Relu', ['X'], ['Y'], name='r')], [vi('X', T.FLOAT, [1 << 62, 8])], [vi('Y', T.FLOAT, None)])
save('overflow_value_info.onnx', [h.make_node('Big', ['X'], ['H'], name='big', domain='com.hostile'), h.make_node('Relu', ['H'], ['Y'], name='r')],
     [vi('X', T.FLOAT, [4])], [vi('Y', T.FLOAT, None)], value_info=[vi('H', T.DOUBLE, [1 << 31, 1 << 31, 4])], extra_opsets=H)
# each fits, together they overflow
K, N = 12, (1 << 58) - 1
save('overflow_sum.onnx', [h.make_node('Big', ['X'], [f'H{i}'], name=f'big{i}', domain='com.hostile') for i in range(K)] +
     [h.make_node('Sum', [f'H{i}' for i in range(K)], ['Y'], name='sum')],
     [vi('X', T.FLOAT, [4])], [vi('Y', T.FLOAT, [N])], value_info=[vi(f'H{i}', T.FLOAT, [N]) for i in range(K)], extra_opsets=H)
# negative dimensions
save('negative_input.onnx', [h.make_node('Relu', ['X'], ['Y'], name='r')], [vi('X', T.FLOAT, [-5, 3])], [vi('Y', T.FLOAT, None)])
save('negative_value_info.onnx', [h.make_node('Mystery', ['X'], ['H'], name='m', domain='com.hostile'), h.make_node('Relu', ['H'], ['Y'], name='r')],
     [vi('X', T.FLOAT, [4])], [vi('Y', T.FLOAT, None)], value_info=[vi('H', T.FLOAT, [7, -1])], extra_opsets=H)
# cycles
save('cycle3.onnx', [h.make_node('Add', ['X', 'c'], ['a'], name='n1'), h.make_node('Relu', ['a'], ['b'], name='n2'), h.make_node('Neg', ['b'], ['c'], name='n3')],
     [vi('X', T.FLOAT, [4])], [vi('c', T.FLOAT, [4])])
save('self_loop.onnx', [h.make_node('Relu', ['X'], ['a'], name='first'), h.make_node('Add', ['a', 'b'], ['b'], name='self')],
     [vi('X', T.FLOAT, [4])], [vi('b', T.FLOAT, [4])])
# a tensor produced twice
save('twice.onnx', [h.make_node('Relu', ['X'], ['t'], name='one'), h.make_node('Sigmoid', ['X'], ['u'], name='mid'), h.make_node('Neg', ['u'], ['t'], name='two')],
     [vi('X', T.FLOAT, [4])], [vi('t', T.FLOAT, [4])])
save('twice_input.onnx', [h.make_node('Relu', ['X'], ['X'], name='shadow')], [vi('X', T.FLOAT, [4])], [vi('X', T.FLOAT, [4])])
# an operator with no size and no value_info
save('unsized.onnx', [h.make_node('Frob', ['X'], ['F'], name='frob', domain='com.hostile'), h.make_node('Relu', ['F'], ['Y'], name='r')],
     [vi('X', T.FLOAT, [4])], [vi('Y', T.FLOAT, None)], extra_opsets=H)
# external data
def ext(name, loc, length=64):
    t = h.make_tensor('W', T.FLOAT, [16], vals=[0.0] * 16)
    t.ClearField('float_data')
    t.data_location = T.EXTERNAL
    for k, v in (('location', loc), ('offset', '0'), ('length', str(length))):
        e = t.external_data.add(); e.key = k; e.value = v
    save(name, [h.make_node('Add', ['X', 'W'], ['Y'], name='add')], [vi('X', T.FLOAT, [16])], [vi('Y', T.FLOAT, [16])], inits=[t])
ext('ext_absolute.onnx', '/etc/hostname')
ext('ext_parent.onnx', '../w.bin')
ext('ext_climb.onnx', 'sub/../../w.bin')
ext('ext_dotdot_inside.onnx', 'sub/../w.bin')
ext('ext_missing.onnx', 'sub/none.bin')
ext('ext_short.onnx', 'w.bin', 1 << 20)
open('w.bin', 'wb').write(bytes(64))
PY
) || { bad "making the models failed"; }
D=$tmp/h
expect "$D/overflow_input.onnx" "$D/overflow_input.onnx: tensor 'Y' (output of node 'r' (Relu)) has shape [4611686018427387904, 8] of float32, whose size in bytes overflows 64 bits; check its declared dimensions"
expect "$D/overflow_value_info.onnx" "$D/overflow_value_info.onnx: tensor 'H' (output of node 'big' (Big)) has shape [2147483648, 2147483648, 4] of float64, whose size in bytes overflows 64 bits; check its declared dimensions"
expect "$D/overflow_value_info.onnx" "$D/overflow_value_info.onnx: tensor 'H' (output of node 'big' (Big)) has shape [2147483648, 2147483648, 4] of float64, whose size in bytes overflows 64 bits; check its declared dimensions" --allow-unknown-sizes
expect "$D/overflow_sum.onnx" "$D/overflow_sum.onnx: the planned tensors need more than 2^61 bytes together (the limit is passed at 'H1'); check the declared dimensions"
expect "$D/negative_input.onnx" "$D/negative_input.onnx: 1 tensor ('Y') has no size: it depends on graph input 'X', whose dimension D1 [declared -5] has no value; pass --input-shape X=D1,3 with a size in place of each name"
expect "$D/negative_value_info.onnx" "$D/negative_value_info.onnx: cannot plan 'H' (output of node 'm' (Mystery)): its value_info declares dimension 1 as -1, which is negative; declare a size >= 0 or a dim_param, or pass --allow-unknown-sizes to leave it out of the plan"
expect "$D/cycle3.onnx" "$D/cycle3.onnx: the graph has a cycle through node 'n1' (Add)"
expect "$D/self_loop.onnx" "$D/self_loop.onnx: the graph has a cycle through node 'self' (Add)"
expect "$D/twice.onnx" "$D/twice.onnx: tensor 't' is produced twice, by node 'one' (Relu) and by node 'two' (Neg)"
expect "$D/twice_input.onnx" "$D/twice_input.onnx: tensor 'X' is produced by node 'shadow' (Relu) but is also a graph input"
expect "$D/unsized.onnx" "$D/unsized.onnx: cannot plan 'F' (output of node 'frob' (Frob)): unsupported operator com.hostile:Frob at node 'frob'; declare its shape in value_info, or pass --allow-unknown-sizes to leave it out of the plan"
leaves="a path that leaves the model's folder; locations must be relative and must not contain '..'"
expect "$D/ext_absolute.onnx" "$D/ext_absolute.onnx: tensor 'W' has external data at '/etc/hostname', $leaves"
expect "$D/ext_parent.onnx" "$D/ext_parent.onnx: tensor 'W' has external data at '../w.bin', $leaves"
expect "$D/ext_climb.onnx" "$D/ext_climb.onnx: tensor 'W' has external data at 'sub/../../w.bin', $leaves"
expect "$D/ext_dotdot_inside.onnx" "$D/ext_dotdot_inside.onnx: tensor 'W' has external data at 'sub/../w.bin', $leaves"
expect "$D/ext_missing.onnx" "$D/ext_missing.onnx: tensor 'W': external data file '$D/sub/none.bin' is missing (No such file or directory)"
expect "$D/ext_short.onnx" "$D/ext_short.onnx: tensor 'W': external data 'w.bin' is 64 bytes, too short for offset 0 + length 1048576"

# ---- 100,000-deep nesting, written byte by byte from the inside out in
# linear time: If nodes whose then_branch holds the next graph, and a type
# nested as sequence of sequence of ...; loading must refuse both at once
# without deep recursion (the tool runs here with a 512 KiB stack)
$PY - "$tmp/deep_graphs.onnx" "$tmp/deep_types.onnx" 100000 <<'PY'
import sys
def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7f, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)
def ld(field, n):  # key and length of a length-delimited field
    return varint(field << 3 | 2) + varint(n)
def model(graph_size, graph_head, graph_tail=b''):
    opset = ld(2, 0) + varint(2 << 3) + varint(17)  # domain "", version 17
    return varint(1 << 3) + varint(8) + ld(8, len(opset)) + opset + ld(7, graph_size) + graph_head + graph_tail
depth = int(sys.argv[3])
inner = ld(2, 1) + b'g'  # GraphProto.name
size, heads = len(inner), []
for _ in range(depth):
    attr = ld(1, 11) + b'then_branch' + varint(20 << 3) + varint(5) + ld(6, size)
    node = ld(4, 2) + b'If' + ld(5, len(attr) + size)
    graph = ld(1, len(node) + len(attr) + size)
    heads.append(graph + node + attr)
    size += len(graph) + len(node) + len(attr)
open(sys.argv[1], 'wb').write(model(size, b''.join(reversed(heads)) + inner))
# graph.value_info[0].type = sequence_type { elem_type { sequence_type { ... } } }
inner = varint(1 << 3 | 2) + varint(0)  # tensor_type {}
size, heads = len(inner), []
for _ in range(depth):
    seq = ld(1, size)           # Sequence.elem_type
    typ = ld(4, len(seq) + size)  # TypeProto.sequence_type
    heads.append(typ + seq)
    size += len(typ) + len(seq)
vi_head = ld(1, 1) + b'v' + ld(2, size)
body = ld(13, len(vi_head) + size) + vi_head + b''.join(reversed(heads)) + inner
open(sys.argv[2], 'wb').write(model(len(body), body))
PY
for kind in graphs types; do
  f=$tmp/deep_$kind.onnx
  rm -f "$tmp/out.onnx"
  start=$(date +%s)
  err=$( (ulimit -s 512; "$OLLA" "$f" "$tmp/out.onnx") 2>&1); rc=$?
  secs=$(( $(date +%s) - start ))
  if [ $kind = graphs ]; then
    head="olla-onnx: $f: subgraphs are nested more than 64 deep at graph.node[0].attribute[0].g.node[0].attribute[0].g.node[0]"
  else
    head="olla-onnx: $f: messages are nested more than 512 deep at graph.value_info[0].type.sequence_type.elem_type.sequence_type"
  fi
  if [ $rc -eq 1 ] && [ "${err#"$head"}" != "$err" ] && [ "${err%"; olla-onnx refuses such models"}" != "$err" ] &&
     [ "$(wc -l <<<"$err")" -eq 1 ] && [ ! -e "$tmp/out.onnx" ] && [ $secs -lt 20 ]; then ok; else
    bad "deep $kind: rc=$rc after ${secs} s: ${err:0:300}"; fi
done

# ---- a planned model whose olla.plan metadata was tampered with: check refuses it
"$OLLA" -q "$M" "$tmp/planned.onnx" || bad "planning $M failed"
$PY - "$tmp/planned.onnx" "$tmp" <<'PY'
import json, sys, onnx
m = onnx.load(sys.argv[1])
meta = {p.key: p for p in m.metadata_props}
text = meta['olla.plan'].value
plan = json.loads(text)
t0 = plan['tensors'][0]
cases = {
    'truncated': text[:50],
    'not_object': '[1,2,3]',
    'negative_offset': json.dumps({**plan, 'tensors': [{**t0, 'offset': -64}] + plan['tensors'][1:]}),
    'huge_arena': json.dumps({**plan, 'arena_bytes': 2**63 - 1}),
    'zero_alignment': json.dumps({**plan, 'alignment': 0}),
    'duplicate': json.dumps({**plan, 'tensors': plan['tensors'] + plan['tensors'][:1]}),
    'missing': json.dumps({**plan, 'tensors': plan['tensors'][1:]}),
    'deep': '[' * 100000 + ']' * 100000,
}
for k, v in cases.items():
    meta['olla.plan'].value = v
    open(f'{sys.argv[2]}/plan_{k}.onnx', 'wb').write(m.SerializeToString())
print(t0['name'], file=open(f'{sys.argv[2]}/first_tensor', 'w'))
print(meta['olla.arena_bytes'].value, file=open(f'{sys.argv[2]}/arena', 'w'))
PY
first=$(cat "$tmp/first_tensor"); arena=$(cat "$tmp/arena")
expect_check() { # FILE "exact message"
  local err; err=$("$OLLA" check "$1" 2>&1 >/dev/null); local rc=$?
  if [ $rc -eq 1 ] && [ "$err" = "olla-onnx check: $2" ]; then ok; else bad "check $(basename "$1"): exit $rc: $err
   wanted: olla-onnx check: $2"; fi
}
P=$tmp/plan
expect_check "${P}_truncated.onnx" "${P}_truncated.onnx: the olla.plan metadata is not valid JSON (it ends early)"
expect_check "${P}_not_object.onnx" "${P}_not_object.onnx: the olla.plan metadata has no version"
expect_check "${P}_negative_offset.onnx" "${P}_negative_offset.onnx: entry 0 of the olla.plan tensors needs a name, a non-negative offset and bytes"
expect_check "${P}_huge_arena.onnx" "${P}_huge_arena.onnx: olla.arena_bytes ($arena) differs from the plan's arena_bytes (9223372036854775807)"
expect_check "${P}_zero_alignment.onnx" "${P}_zero_alignment.onnx: the olla.plan metadata lacks a valid alignment or arena_bytes"
expect_check "${P}_duplicate.onnx" "${P}_duplicate.onnx: the plan lists '$first' twice"
expect_check "${P}_missing.onnx" "${P}_missing.onnx: planned tensor '$first' is missing from the plan"
expect_check "${P}_deep.onnx" "${P}_deep.onnx: the olla.plan metadata is not valid JSON (nesting too deep)"

cli_finish "hostile"
