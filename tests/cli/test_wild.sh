#!/usr/bin/env bash
# Models shaped like published exports (tests/tools/make_wild_models.py):
#  1. guidance that works on the first try: sizes that wait on graph inputs
#     are one error naming the inputs, their open dimensions (never the
#     output-only ones) and the one flag for each, which then plans; shapes
#     gives the same text; "/" never splits a name and no name is cut;
#  2. bindings checked per model: batch applies --dim and --input-shape to the
#     models that have the name and says which it left out; a binding that
#     inflates a declared size is a warning naming both sizes (an error with
#     --strict-shapes); an --input-shape that changes a fixed dimension is a
#     warning, and a shape-rule failure under it names it;
#  3. Constants are constants and a view of a graph input is no copy, in every
#     runtime mode and with or without sharing; the saving is judged by what
#     the runtime holds, in the summary and in batch's total;
#  6. check --dim keeps the other recorded bindings; batch's unchanged key
#     follows every option that changes the written file; the SVG draws the
#     orders the runtime executes over the steps at which an op runs, with the
#     summary's figures.
# Needs /usr/bin/python3 with onnx and numpy; exits 77 (skipped) without them.
# ONNX Runtime checks run when node and tests/ort/node_modules are there.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-5}
PY=/usr/bin/python3
cli_tmp
cli_need_python onnx numpy
W=$tmp/m
$PY "$SRC/tests/tools/make_wild_models.py" "$W" >"$tmp/facts" || { echo "FAIL: make_wild_models.py"; exit 1; }
fact() { sed -n "s/^$1=//p" "$tmp/facts"; }
report() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r[sys.argv[2]])' "$@"; }

# ---- 1. guidance
# The advice names exactly the graph input's open dimensions, never a name only the outputs declare; its
# --input-shape template is the declared shape; and following it (sizes in place of the names) plans.
for m in ocr_det ocr_rec ocr_cls two_dims; do
  err=$("$OLLA" "$W/$m.onnx" "$tmp/o.onnx" 2>&1); rc=$?
  [ $rc -eq 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && ok || { bad "$m: exit $rc, not one line: $err"; continue; }
  printf '%s\n' "$err" >"$tmp/err"
  $PY - "$W/$m.onnx" "$tmp/err" >"$tmp/follow" <<'PY' || bad "$m: advice: $err"
import re, sys, onnx
m = onnx.load(sys.argv[1]); err = open(sys.argv[2]).read().strip()
x = m.graph.input[0]
dims = [d.dim_param or str(d.dim_value) for d in x.type.tensor_type.shape.dim]
names = [d.dim_param for d in x.type.tensor_type.shape.dim if d.dim_param]
out_only = {d.dim_param for o in m.graph.output for d in o.type.tensor_type.shape.dim if d.dim_param} - set(names)
prefix = f"olla-onnx: {sys.argv[1]}: "
assert err.startswith(prefix), err
listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
want = (f"have no size: they depend on graph input '{x.name}', whose dimension{'s' if len(names) > 1 else ''} "
        f"{listed} {'have' if len(names) > 1 else 'has'} no value; pass --input-shape {x.name}={','.join(dims)} "
        f"with a size in place of each name, or " + " ".join(f"--dim {n}=N" for n in names))
assert err.endswith(want), (err, want)
assert not any(n in err for n in out_only), out_only
# the flag with sizes in place of the names, and the --dim alternative
sizes = {n: str(8 * (k + 1)) for k, n in enumerate(names)}
print("--input-shape " + x.name + "=" + ",".join(sizes.get(d, d) for d in dims))
print(" ".join(f"--dim {n}={v}" for n, v in sizes.items()))
PY
  # shellcheck disable=SC2046
  "$OLLA" -q $(sed -n 1p "$tmp/follow") "$W/$m.onnx" "$tmp/$m.a.onnx" 2>"$tmp/e" && "$OLLA" check "$tmp/$m.a.onnx" >/dev/null &&
    ok || bad "$m: following the --input-shape advice ($(sed -n 1p "$tmp/follow")): $(cat "$tmp/e")"
  # shellcheck disable=SC2046
  "$OLLA" -q $(sed -n 2p "$tmp/follow") "$W/$m.onnx" "$tmp/$m.b.onnx" 2>"$tmp/e" && "$OLLA" check "$tmp/$m.b.onnx" >/dev/null &&
    ok || bad "$m: following the --dim advice ($(sed -n 2p "$tmp/follow")): $(cat "$tmp/e")"
  # shapes gives the same advice, from the same code
  "$OLLA" shapes "$W/$m.onnx" >"$tmp/shapes.json" 2>"$tmp/shapes.err"
  $PY - "$tmp/shapes.json" "$tmp/err" "$tmp/shapes.err" "$W/$m.onnx" <<'PY' && ok || bad "$m: shapes' advice differs from the main command's"
import json, sys
advice = json.load(open(sys.argv[1]))["advice"]
err, serr = open(sys.argv[2]).read().strip(), open(sys.argv[3]).read().strip()
assert advice and err == f"olla-onnx: {sys.argv[4]}: {advice}", (advice, err)
assert serr == f"olla-onnx shapes: {sys.argv[4]}: {advice}", serr
PY
done
# the first error given the advice for one input of two; D2 stands for an unnamed dimension
err=$("$OLLA" "$W/two_inputs.onnx" "$tmp/o.onnx" 2>&1)
[[ "$err" == *"they depend on graph inputs 'a' (dimension batch) and 'b' (dimension D2) with no value; pass --input-shape a=batch,16 --input-shape b=16,D2 with a size in place of each name" ]] &&
  ok || bad "two inputs: $err"
"$OLLA" -q --input-shape a=4,16 --input-shape b=16,8 "$W/two_inputs.onnx" "$tmp/o.onnx" && ok || bad "two inputs: the advice followed did not plan"
# "/" belongs to a name: nested If outputs sized only by their declaration
err=$("$OLLA" "$W/nested_if.onnx" "$tmp/o.onnx" 2>&1)
[ "$err" = "olla-onnx: $W/nested_if.onnx: 2 tensors ('/If_output_0', 'output') have symbolic dimensions with no value; pass --dim $(fact nested_if.dim)=N" ] &&
  ok || bad "nested If: $err"
"$OLLA" -q --report "$tmp/if.json" --dim "$(fact nested_if.dim)=2" "$W/nested_if.onnx" "$tmp/if.onnx" 2>"$tmp/e" &&
  "$OLLA" check "$tmp/if.onnx" >/dev/null && ok || bad "nested If with its --dim: $(cat "$tmp/e")"
# more names than a message holds: every name whole, a complete sentence at the end, under the error's size
err=$("$OLLA" "$W/long_names.onnx" "$tmp/o.onnx" 2>&1)
$PY - "$W/long_names.onnx" <<PY && ok || bad "long names: $err"
import re, sys, onnx
err = """$err"""
m = onnx.load(sys.argv[1])
names = {d.dim_param for o in m.graph.output for d in o.type.tensor_type.shape.dim if d.dim_param}
given = re.findall(r"--dim (\S+)=N", err)
assert len(given) >= 5 and all(g in names for g in given), given
assert len(set(given)) == len(given)
assert err.endswith("=N (and more: olla-onnx shapes lists them)"), err[-80:]
assert len(err) <= len("olla-onnx: ") + 1023
assert err.count("'") % 2 == 0
PY

# ---- 2. bindings checked per model
B=$tmp/batch_in; mkdir -p "$B/ocr" "$B/other"
cp "$W"/ocr_det.onnx "$W"/ocr_rec.onnx "$W"/ocr_cls.onnx "$B/ocr/"
cp "$W"/constant_weights.onnx "$W"/flatten_input.onnx "$W"/bad_nonzero.onnx "$B/other/"
run_batch() { # out_dir report args...
  local out=$1 rep=$2; shift 2
  "$OLLA" batch -j 2 --report "$rep" "$@" "$B" "$out" 2>"$tmp/batch.err"
}
run_batch "$tmp/bo" "$tmp/b.jsonl" --dim p2o.DynamicDimension.2=640 --input-shape x=1,3,640,640; rc=$?
[ $rc -eq 1 ] && ok || bad "mixed batch: exit $rc (one model cannot be planned): $(cat "$tmp/batch.err")"
$PY - "$tmp/b.jsonl" "$SRC" <<'PY' && ok || bad "mixed batch report: $(cat "$tmp/b.jsonl")"
import json, sys
lines = {json.loads(l)["model"].split("/")[-1]: json.loads(l) for l in open(sys.argv[1])}
det, rec, cls = lines["ocr_det.onnx"], lines["ocr_rec.onnx"], lines["ocr_cls.onnx"]
assert det["status"] == "ok" and det["bindings_not_applied"] == [], det
# cls names no p2o.DynamicDimension.2: planned as if it were not given, and says so
assert cls["status"] == "ok" and cls["bindings_not_applied"] == [
    "--dim p2o.DynamicDimension.2=640: no dimension of the model has this name"], cls["bindings_not_applied"]
# the flatten model's x has rank 3: the 4-dimensional shape is not for it
fl = lines["flatten_input.onnx"]
assert fl["status"] == "ok" and fl["bindings_not_applied"] == [
    "--dim p2o.DynamicDimension.2=640: no dimension of the model has this name",
    "--input-shape x=1,3,640,640: the model's graph input of this name has another rank"], fl["bindings_not_applied"]
assert lines["bad_nonzero.onnx"]["status"] == "failed"
# rec: the --dim meant for det's height binds rec's output batch; the declared size wins, with a warning
# naming both sizes: 640 x T x 97 floats declared, 1 x T x 97 inferred (T = 640 / 2, the conv's stride)
T, C = 640 // 2, 97
declared, inferred = 640 * T * C * 4, 1 * T * C * 4
assert rec["status"] == "ok", rec
w = rec["warnings"]
fixed = [x for x in w if x.startswith("--input-shape x=1,3,640,640 changes dimension 2 of graph input 'x' from 48")]
size = [x for x in w if "under --dim p2o.DynamicDimension.2=640" in x]
assert fixed and size, w
assert f"{declared} bytes" in size[0] and f"has {inferred};" in size[0], size[0]
assert w.index(size[0]) < 2 and w.index(fixed[0]) < 2  # the bindings' warnings come first
PY
grep -q "^olla-onnx batch: ocr/ocr_rec.onnx: warning: 'y' (node 'softmax', Softmax): under --dim p2o.DynamicDimension.2=640 the model declares float32\[640,320,97\]" "$tmp/batch.err" &&
  grep -qE "^ocr/ocr_rec.onnx +7 .* ok, warnings$" "$tmp/batch.err" && ok || bad "batch terminal: $(cat "$tmp/batch.err")"
# with --strict-shapes the inflated size is an error naming both sizes
run_batch "$tmp/bs" "$tmp/bs.jsonl" --strict-shapes --dim p2o.DynamicDimension.2=640 --input-shape x=1,3,640,640
grep '"ocr/ocr_rec.onnx\|ocr_rec.onnx"' "$tmp/bs.jsonl" | grep '"status":"failed"' | grep -q "under --dim p2o.DynamicDimension.2=640 the model declares float32\[640,320,97\], 79462400 bytes, where the inferred float32\[1,320,97\] has 124160; check the binding" &&
  ok || bad "--strict-shapes: $(grep ocr_rec "$tmp/bs.jsonl")"
# the summary of one model says it too, first
"$OLLA" --dim p2o.DynamicDimension.2=640 --input-shape x=1,3,640,640 "$W/ocr_rec.onnx" "$tmp/o.onnx" 2>"$tmp/s"
head -2 "$tmp/s" | grep -q "^olla-onnx: warning: .*under --dim p2o.DynamicDimension.2=640 the model declares .*79462400 bytes, where the inferred .* has 124160" &&
  grep -q "^  the bindings given cause 2 warnings (above)" "$tmp/s" && ok || bad "summary: $(cat "$tmp/s")"
# a shape rule that fails under an override names the override
err=$("$OLLA" --input-shape x=1,3,64,16 "$W/override_reshape.onnx" "$tmp/o.onnx" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *"node 'fc' (MatMul): inner dimensions 3072 and 2304 differ; this is under --input-shape x=1,3,64,16 (declared float32[1,3,48,16]): check the override, or fix the model" ]] &&
  ok || bad "a rule failure under --input-shape: exit $rc: $err"

# ---- 3. Constants are constants; a view of a graph input is no copy
for rt in ort listed ort-priority; do
  for sh in runtime none; do
    f=$tmp/cw.$rt.$sh
    "$OLLA" -q --runtime $rt --sharing $sh --report "$f.json" "$W/constant_weights.onnx" "$f.onnx" 2>"$tmp/e" ||
      { bad "constant_weights $rt $sh: $(cat "$tmp/e")"; continue; }
    "$OLLA" check "$f.onnx" >/dev/null 2>"$tmp/e" || bad "constant_weights $rt $sh: check: $(cat "$tmp/e")"
    $PY - "$f.onnx" "$f.json" "$(fact constant_weights.constant_bytes)" "$(fact constant_weights.smallest_weight)" <<'PY' &&
import json, sys, onnx
m = onnx.load(sys.argv[1]); r = json.load(open(sys.argv[2]))
const_bytes, weight = int(sys.argv[3]), int(sys.argv[4])
plan = json.loads({p.key: p.value for p in m.metadata_props}["olla.plan"])
consts = {o for n in m.graph.node if n.op_type == "Constant" for o in n.output}
planned = {t["name"] for t in plan["tensors"]}
assert not planned & consts, planned & consts
assert "bias" in planned  # ConstantOfShape runs in ONNX Runtime with optimizations off: an intermediate
assert r["constant_bytes"] == const_bytes, (r["constant_bytes"], const_bytes)
# no figure of the input order counts a weight: each is smaller than the smallest one
for k in ("input_order_peak_bytes", "input_order_shared_peak_bytes", "input_order_online_arena_bytes",
          "input_executed_peak_bytes", "saving_input_bytes", "peak_bytes", "arena_bytes"):
    assert 0 < r[k] < weight, (k, r[k])
PY
    ok || bad "constant_weights --runtime $rt --sharing $sh: $(cat "$f.json")"
  done
done
flat=$(fact flatten_input.flat_bytes)
for sh in runtime none; do
  f=$tmp/fl.$sh
  "$OLLA" -q --sharing $sh --runtime listed --align 1 --report "$f.json" "$W/flatten_input.onnx" "$f.onnx" 2>"$tmp/e" &&
    "$OLLA" check "$f.onnx" >/dev/null || { bad "flatten_input $sh: $(cat "$tmp/e")"; continue; }
  # the live tensors at the input order's peak are no more than the largest two of the others
  $PY - "$f.onnx" "$f.json" "$flat" <<'PY' && ok || bad "flatten_input --sharing $sh: a copy of the input counted: $(cat "$f.json")"
import json, sys, onnx
m = onnx.load(sys.argv[1]); r = json.load(open(sys.argv[2])); flat = int(sys.argv[3])
plan = json.loads({p.key: p.value for p in m.metadata_props}["olla.plan"])
assert "flat" not in {t["name"] for t in plan["tensors"]}
# h[1,32], a[1,32], logit[1,1], y[1,1] floats: at most h and a live at once
assert r["input_order_peak_bytes"] <= 2 * 32 * 4 < flat, r["input_order_peak_bytes"]
assert r["input_order_online_arena_bytes"] < flat, r["input_order_online_arena_bytes"]
PY
done
# the headline saving is what the runtime holds; batch's total sums the same figures
grep -qE "^  saving: ([0-9.]+%|[0-9.]+ (B|KiB|MiB|GiB) \(under 0.1%\)) of what ONNX Runtime allocates with its arena off \(" "$tmp/s" && ok || bad "summary headline: $(grep saving "$tmp/s")"
$PY - "$tmp/b.jsonl" "$tmp/batch.err" <<'PY' && ok || bad "batch total: $(tail -1 "$tmp/batch.err")"
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ok = [r for r in rows if r["status"] == "ok"]
assert all(r["saving_basis"] == ("ort_allocated" if r["ort_allocated_bytes"] is not None else "executed_peak") for r in ok)
assert all(r["saving_input_bytes"] == (r["input_ort_allocated_bytes"] if r["saving_basis"] == "ort_allocated"
                                       else r["input_executed_peak_bytes"]) for r in ok)
a, b = sum(r["saving_input_bytes"] for r in ok), sum(r["saving_planned_bytes"] for r in ok)
last = open(sys.argv[2]).read().strip().splitlines()[-1]
got = re.search(r"total saving (.+) of what the runtimes hold", last).group(1)
pct = 100.0 * (a - b) / a
if b > a:
    assert re.fullmatch(r"none \([0-9.]+ (B|KiB|MiB|GiB) more\)", got), (got, a, b)
elif 0 < pct < 0.05:
    assert re.fullmatch(r"[0-9.]+ (B|KiB|MiB|GiB) \(under 0.1%\)", got), (got, a, b)
else:
    assert got.endswith("%") and abs(float(got[:-1]) - pct) < 0.051, (got, a, b)
PY

# ---- 6. check keeps the other recorded bindings
"$OLLA" -q --dim batch=2 --dim seq=8 "$W/two_dims.onnx" "$tmp/td.onnx" || bad "two_dims did not plan"
"$OLLA" check --dim batch=2 "$tmp/td.onnx" >/dev/null 2>"$tmp/e" && [ ! -s "$tmp/e" ] && ok ||
  bad "check --dim batch=2 (the plan's own) dropped seq=8: $(cat "$tmp/e")"
"$OLLA" check --dim seq=9 "$tmp/td.onnx" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -qx "olla-onnx check: --dim seq=9 replaces the plan's seq=8" "$tmp/e" &&
  grep -q "the plan was made for seq=8; this check binds seq=9 (" "$tmp/e" && ! grep -q "batch" "$tmp/e" && ok ||
  bad "check --dim seq=9: exit $rc: $(cat "$tmp/e")"
# batch: every option that changes the written file changes the key; -q, -v and the order do not
K=$tmp/key_in; mkdir -p "$K"; cp "$W/flatten_input.onnx" "$W/constant_weights.onnx" "$K/"
keyrun() { "$OLLA" batch -j 2 "$@" "$K" "$tmp/key_out" 2>&1 | tail -1; }
keyrun --dim a=1 --align 64 >/dev/null
for opt in "--runtime listed" "--sharing none" "--input-shape x=1,16,96" "--strict-shapes" "--align 128" "--keep-order"; do
  # shellcheck disable=SC2086
  line=$(keyrun --dim a=1 --align 64 $opt)
  [[ "$line" == "2 models: 2 converted, 0 unchanged, 0 failed"* ]] && ok || bad "batch after adding $opt: $line"
  # shellcheck disable=SC2086
  line=$(keyrun $opt --align 64 -q --dim a=1; keyrun -v $opt --align 64 --dim a=1)
  [[ "$line" == *"2 models: 0 converted, 2 unchanged, 0 failed"* ]] && ok || bad "batch with $opt again, in another order: $line"
  keyrun --dim a=1 --align 64 >/dev/null
done

# ---- 6. the SVG: the orders the runtime executes, over the steps at which an op runs, the summary's figures
"$OLLA" --svg "$tmp/b.svg" --report "$tmp/br.json" "$W/branches.onnx" "$tmp/br.onnx" 2>"$tmp/s" || bad "branches: $(cat "$tmp/s")"
$PY - "$tmp/b.svg" "$tmp/br.json" "$tmp/s" "$W/branches.onnx" <<'PY' && ok || bad "branches SVG: $(grep -o '<text class="figures"[^<]*' "$tmp/b.svg")"
import json, re, sys, onnx
svg, r, summary = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), open(sys.argv[3]).read()
m = onnx.load(sys.argv[4])
running = sum(1 for n in m.graph.node if n.op_type != "Constant")
title = re.search(r'<text class="figures"[^>]*>([^<]*)</text>', svg).group(1)
fig = re.search(r"input-order peak (.*) as ort runs it, planned peak (.*), arena (.*), (\d+) steps, \d+ tensors", title)
assert fig and int(fig.group(4)) == running, title
# the same figures as the summary, written the same way
s = re.search(r", ([^,;]*) as ort runs it; planned peak: ([^;]*); arena: (.*)$", summary, re.M)
assert s and (fig.group(1), fig.group(2), fig.group(3)) == s.groups(), (title, s and s.groups())
# the input curve is ORT's order of the file, not the listing: the listing keeps both branches' big tensors alive
lev = {c: int(b) for c, b in re.findall(r'class="level ([a-z-]+)" data-bytes="(\d+)"', svg)}
assert lev["input-peak"] == r["input_executed_peak_bytes"] < r["input_order_shared_peak_bytes"], (lev, r)
PY
"$OLLA" -q --svg "$tmp/d.svg" --input-shape x=1,3,32,32 "$W/ocr_det.onnx" "$tmp/d.onnx" || bad "ocr_det --svg"
steps=$(grep -o '[0-9]* steps, [0-9]* tensors' "$tmp/d.svg" | cut -d' ' -f1)
consts=$($PY -c 'import onnx,sys; m=onnx.load(sys.argv[1]); print(sum(n.op_type == "Constant" for n in m.graph.node), len(m.graph.node))' "$W/ocr_det.onnx")
[ "$steps" = "$(( ${consts#* } - ${consts% *} ))" ] && ok || bad "ocr_det SVG: $steps steps for nodes/Constants $consts"

# ---- ONNX Runtime runs the written models and computes what the inputs compute; the rule for
# constants is what it does: with optimizations off it runs the ConstantOfShape of a Constant (planned),
# never a Constant, and allocates nothing for a Constant's weight during a run
if command -v node >/dev/null && [ -d "$SRC/tests/ort/node_modules/onnxruntime-node" ]; then
  node "$SRC/tests/ort/exec_order.mjs" "$W/constant_weights.onnx" >"$tmp/ran" 2>&1 &&
    grep -qx fill "$tmp/ran" && ! grep -qE '^(w1|w2|bias_shape)$' "$tmp/ran" && ok ||
    bad "ONNX Runtime's order of constant_weights: $(tr '\n' ' ' <"$tmp/ran")"
  counter=${OLLA_BINARY_DIR:-}/tests/ort/libolla_alloc_counter.so
  if [ -f "$counter" ]; then
    run=$(bash "$SRC/tests/ort/measure.sh" --lib "$counter" "$W/constant_weights.onnx" --runs 1 2>&1)
    peak=$(sed -n 's/.*"peak_bytes":\([0-9]*\).*/\1/p' <<<"$run")
    [ -n "$peak" ] && [ "$peak" -lt "$(fact constant_weights.smallest_weight)" ] && ok ||
      bad "ONNX Runtime holds a Constant's weight in a run: $run"
  fi
  for pair in "$W/nested_if.onnx $tmp/if.onnx --dim $(fact nested_if.dim)=2" "$W/ocr_det.onnx $tmp/d.onnx --dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=32 --dim p2o.DynamicDimension.2=32" \
              "$W/constant_weights.onnx $tmp/cw.listed.none.onnx"; do
    # shellcheck disable=SC2086
    out=$(node "$SRC/tests/ort/compare.mjs" $pair 2>&1) && ok || bad "ONNX Runtime: $out"
  done
else
  cli_missing "the ONNX Runtime comparison needs node and tests/ort/node_modules (scripts/setup_ort.sh)"
fi

cli_finish "wild"
