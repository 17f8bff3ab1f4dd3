#!/usr/bin/env bash
# Training graphs in a real ONNX Runtime (onnxruntime-web 1.18.0's training
# WebAssembly build, tests/ort/README.md "Running training graphs"):
# - the steps scripts/make_training_models.py makes (MLP, CNN with batch
#   normalization and max pooling, transformer block) run, and their loss,
#   gradients and updates match an independent PyTorch reference
#   (check_training_grads.py), with SGD and with gradient accumulation, fixed
#   and symbolic batch; the reference catches a perturbed gradient and a
#   model that is not the one it describes;
# - every tensor of a generated step has a value_info;
# - a run is deterministic: two processes give the same output hashes and the
#   same heap figure (on a step that grows the heap past its start);
# - --runs: three runs in one session give the first run's outputs; with the
#   memory pattern off the heap stays at the first run's figure, with it on
#   the later runs' blocks take more than the first run; a step
#   whose runs differ (seeded Dropout: its generator goes on from run to run)
#   is refused, naming the output;
# - the runtime's fixed overhead (a one-Neg graph: heap minus input and
#   output) is positive and below the heap's starting size;
# - recomputation written by hand (remat_by_hand.py, the rewrite olla-onnx's
#   --memory-limit makes) on a transformer and a CNN step: outputs
#   bit-identical, heap lower by more than the fixed overhead; the runtime
#   runs the copies late, just before their readers, when they are listed
#   before the backward pass, and earlier when listed just before their
#   readers; a changed model is reported as different, naming the outputs;
# - olla-onnx --memory-limit (80% and 60%) on the same steps: outputs
#   bit-identical, heap lower wherever the plan lowers ONNX Runtime's
#   allocation by more than the fixed overhead, and at 60% also over three
#   runs with the memory pattern on;
# - replace_aten.py: a step with the ATen nodes of traced steps (nll_loss
#   forward and backward with ignored targets, ones_like, empty) and
#   com.microsoft MaxPoolGrad runs once rewritten, with numpy's values;
# - bad input: missing file, not a model, an operator without a kernel (named),
#   an unbound symbolic dimension, a sequence input, bad options, a bundle the
#   harness does not know.
# Skipped (77) only without node or onnxruntime-web (scripts/setup_ort.sh).
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
py=/usr/bin/python3
. "$src/tests/ort/ort_env.sh"
ort_training_skip_unless_ready
. "$src/tests/cli/lib.sh"
cli_tmp
work=$tmp
gen="$src/scripts/make_training_models.py"
if ! "$py" -c 'import onnx, numpy, torch' 2>"$work/py.err"; then
  echo "FAILED: /usr/bin/python3 cannot import onnx, numpy and torch (bash scripts/setup.sh --test installs them): $(cat "$work/py.err")"
  exit 1
fi

# run NAME MODEL ARGS...: train_run.mjs; the report in $work/NAME.json, stderr in $work/NAME.err.
run() {
  local name="$1"; shift
  node "$ort/train_run.mjs" "$@" >"$work/$name.json" 2>"$work/$name.err"
}
field() { jq -r "$1" "$work/$2.json"; }

# --- Gradients against the PyTorch reference.
# dump NAME DIR KIND ARGS...: run KIND's step with --dump; queue it for the check.
pairs=()
dump() {
  local name="$1" dir="$2" kind="$3"; shift 3
  if run "$name" "$dir/$kind.onnx" --dump "$work/$name.dump" "$@"; then
    pairs+=("$dir/$kind.json" "$work/$name.dump")
  else
    bad "$name: train_run.mjs: $(cat "$work/$name.err")"
  fi
}
"$py" "$gen" "$work/sgd" --expose-grads >/dev/null || bad "make_training_models.py (sgd) failed"
"$py" "$gen" "$work/acc" --expose-grads --update accumulate --symbolic-batch --depth 3 --width 16 --loss ce \
  --image 10 --seq 8 --heads 2 --classes 5 >/dev/null || bad "make_training_models.py (accumulate) failed"
for kind in mlp cnn transformer; do
  dump "sgd_$kind" "$work/sgd" "$kind"
  dump "acc_$kind" "$work/acc" "$kind" --dim batch=3 --seed 1
done
dump acc_mlp_2 "$work/acc" mlp --dim batch=3 --seed 2
out="$("$py" "$ort/check_training_grads.py" "${pairs[@]}")"
if [ $? -eq 0 ] && [ "${#pairs[@]}" -eq 14 ]; then
  ok "7 steps: $(grep -c '^ok' <<<"$out") loss, gradient and update checks against torch"
else
  bad "gradient checks: $(grep -v '^ok' <<<"$out")"
fi
resets="$("$py" -c 'import json, numpy, sys
for d in sys.argv[1:]:
    m = json.load(open(d + "/manifest.json"))
    f = [e["file"] for e in m["inputs"] if e["name"] == "lazy_reset_grad"][0]
    print(int(numpy.load(d + "/" + f)[0]), end="")' "$work"/acc_*.dump)"
[[ "$resets" == *0* && "$resets" == *1* ]] && ok "the accumulation was checked with lazy_reset_grad true and false" ||
  bad "the seeds never fed lazy_reset_grad both values: $resets"
[ "$(field '.inputs[] | select(.name == "x") | .shape[0]' acc_cnn)" = 3 ] && ok "the symbolic batch is bound by --dim" ||
  bad "acc_cnn: x is not fed at batch 3: $(cat "$work/acc_cnn.json")"

# The reference must notice a wrong gradient and a model that is not the one described.
"$py" - "$work/sgd_cnn.dump" <<'EOF'
import json, numpy, sys
d = sys.argv[1]; m = json.load(open(d + "/manifest.json"))
f = [e["file"] for e in m["outputs"] if e["name"] == "conv1.weight_grad"][0]
a = numpy.load(d + "/" + f); a.flat[int(numpy.abs(a).argmax())] *= 1.01; numpy.save(d + "/" + f, a)
EOF
out="$("$py" "$ort/check_training_grads.py" "$work/sgd/cnn.json" "$work/sgd_cnn.dump")" &&
  bad "a gradient whose largest element changed by 1% passed: $out" ||
  { grep -q "^FAILED: conv1.weight gradient" <<<"$out" && ok "a gradient whose largest element changed by 1% is caught" ||
    bad "the perturbed gradient is not named: $out"; }
jq '.heads = 2' "$work/sgd/transformer.json" >"$work/wrong_heads.json"
out="$("$py" "$ort/check_training_grads.py" "$work/wrong_heads.json" "$work/sgd_transformer.dump")" &&
  bad "a reference with 2 heads matched the 4-head step: $out" || ok "a reference with other heads does not match"

# Every tensor has a value_info, as traced graphs do.
out="$("$py" - "$work/sgd" "$work/acc" <<'EOF'
import onnx, sys
for d in sys.argv[1:]:
    for kind in ("mlp", "cnn", "transformer"):
        g = onnx.load(f"{d}/{kind}.onnx").graph
        known = {v.name for v in list(g.value_info) + list(g.output) + list(g.input)}
        missing = [o for n in g.node for o in n.output if o and o not in known]
        typed = all(v.type.tensor_type.elem_type and v.type.tensor_type.HasField("shape") for v in g.value_info)
        if missing or not typed:
            print(f"{d}/{kind}.onnx: no value_info for {missing[:3]}" if missing else f"{d}/{kind}.onnx: untyped value_info")
EOF
)"
[ -z "$out" ] && ok "every tensor of the generated steps has an element type and a shape" || bad "$out"

# --- Determinism and the heap figure.
"$py" "$gen" "$work/mid" --kinds cnn --depth 4 --width 16 --image 64 --batch 48 >/dev/null &&
"$py" "$gen" "$work/mid" --kinds transformer --depth 4 --width 64 --seq 256 --heads 4 --batch 4 >/dev/null ||
  bad "make_training_models.py (mid sizes) failed"
if run det1 "$work/mid/transformer.onnx" && run det2 "$work/mid/transformer.onnx"; then
  h1="$(field '[.outputs[].sha256] | join(",")' det1)"; h2="$(field '[.outputs[].sha256] | join(",")' det2)"
  a1="$(field .heap_bytes det1)"; a2="$(field .heap_bytes det2)"; start="$(field .heap_start_bytes det1)"
  [ "$h1" = "$h2" ] && ok "two processes give the same $(field '.outputs | length' det1) output hashes" ||
    bad "outputs differ between two runs"
  [ "$a1" = "$a2" ] && [ "$a1" -gt "$start" ] && ok "two processes give the same heap figure, $a1 bytes (start $start)" ||
    bad "heap figures $a1 and $a2 (start $start): not equal, or the step did not grow the heap"
  [ $((a1 % 65536)) -eq 0 ] && ok "the heap grows in whole 64 KiB pages" || bad "heap $a1 is not a multiple of 64 KiB"
  # Three runs in one session, the memory pattern off and on.
  if run runs_off "$work/mid/transformer.onnx" --runs 3 && run runs_on "$work/mid/transformer.onnx" --runs 3 --pattern on
  then
    for r in runs_off runs_on; do
      [ "$(field '[.outputs[].sha256] | join(",")' $r)" = "$h1" ] && [ "$(field .runs $r)" = 3 ] &&
        [ "$(field '.heap_bytes_runs | length' $r)" = 3 ] && [ "$(field '.heap_bytes_runs[2]' $r)" = "$(field .heap_bytes $r)" ] &&
        ok "$r: three runs give the one run's outputs; heap after each run $(field '.heap_bytes_runs | tostring' $r)" ||
        bad "$r: $(cat "$work/$r.json")"
    done
    [ "$(field '.heap_bytes_runs | tostring' runs_off)" = "[$a1,$a1,$a1]" ] &&
      ok "the memory pattern off: later runs reuse the first run's heap ($a1)" ||
      bad "the memory pattern off: heap after each run $(field '.heap_bytes_runs | tostring' runs_off), one run $a1"
    # The first run traces the pattern (its own bookkeeping, which can move the
    # heap by a page either way); the later runs take the pattern's blocks.
    on1="$(field '.heap_bytes_runs[0]' runs_on)"
    [ "$(field '.heap_bytes_runs[2]' runs_on)" -gt "$on1" ] && [ "$(field .pattern runs_on)" = true ] &&
      ok "the memory pattern on: the later runs' blocks take more than the first run ($(field .heap_bytes runs_on) > $on1)" ||
      bad "the memory pattern on: heap after each run $(field '.heap_bytes_runs | tostring' runs_on), without it $a1"
  else
    bad "--runs 3: $(cat "$work/runs_off.err" "$work/runs_on.err")"
  fi
else
  bad "the mid-size transformer step does not run: $(cat "$work/det1.err" "$work/det2.err")"
fi
out="$(node "$ort/train_compare.mjs" "$work/sgd/mlp.onnx" "$work/sgd/mlp.onnx" --runs 2 --pattern on 2>&1)"; rc=$?
[ "$rc" -eq 0 ] && [ "$(jq '.a.heap_bytes_runs | length' <<<"$out")" = 2 ] && [ "$(jq .heap_saved_bytes <<<"$out")" = 0 ] &&
  ok "train_compare.mjs passes --runs and --pattern to both runs" || bad "train_compare.mjs --runs 2: exit $rc: $out"

# --- The runtime's fixed overhead: what a one-Neg graph needs beyond its input and output.
"$py" "$gen" "$work/ovh" --kinds overhead --width 1048576 --batch 4 >/dev/null || bad "make_training_models.py overhead failed"
overhead=0
if run ovh "$work/ovh/overhead.onnx"; then
  overhead=$(( $(field .heap_bytes ovh) - 2 * 4 * 1048576 * 4 ))
  [ "$overhead" -gt 0 ] && [ "$overhead" -lt "$(field .heap_start_bytes ovh)" ] &&
    ok "fixed overhead $overhead bytes (heap starts at $(field .heap_start_bytes ovh))" ||
    bad "fixed overhead $overhead out of (0, heap start)"
else
  bad "the overhead model does not run: $(cat "$work/ovh.err")"
fi

# --- Recomputation by hand: bit-identical outputs, lower heap, copies run late.
# remat NAME MODEL KEEP: rewrite, compare; checks identity and a saving above the overhead.
remat() {
  local name="$1" model="$2" keep="$3" out rc
  "$py" "$ort/remat_by_hand.py" "$model" "$work/$name.remat.onnx" --keep "$keep" >"$work/$name.remat.txt" ||
    { bad "$name: remat_by_hand.py failed"; return; }
  out="$(node "$ort/train_compare.mjs" "$model" "$work/$name.remat.onnx" 2>&1)"; rc=$?
  if [ "$rc" -ne 0 ] || [ "$(jq -r .identical <<<"$out")" != true ]; then
    bad "$name: the rewritten step differs (exit $rc): $out"; return
  fi
  local saved a b
  saved="$(jq .heap_saved_bytes <<<"$out")"; a="$(jq .a.heap_bytes <<<"$out")"; b="$(jq .b.heap_bytes <<<"$out")"
  ok "$name: $(jq .outputs <<<"$out") outputs bit-identical after recomputing $(jq .recomputed_tensors "$work/$name.remat.txt") tensors"
  [ "$saved" -gt "$overhead" ] && [ "$overhead" -gt 0 ] &&
    ok "$name: heap $a -> $b bytes, lower by $saved > the fixed overhead $overhead" ||
    bad "$name: heap $a -> $b bytes, saved $saved, not more than the fixed overhead $overhead"
}
remat transformer "$work/mid/transformer.onnx" 'residual|embed\.out'
remat cnn "$work/mid/cnn.onnx" 'relu|pool'
jq -e '.copied_ops | has("BatchNormInternal") | not' "$work/cnn.remat.txt" >/dev/null &&
  ok "batch normalization is not recomputed (it updates its running statistics in its input buffers)" ||
  bad "remat_by_hand.py copied BatchNormInternal: $(cat "$work/cnn.remat.txt")"

"$py" "$ort/remat_by_hand.py" "$work/sgd/transformer.onnx" "$work/t_small.onnx" --keep 'residual|embed\.out' >/dev/null &&
if run order "$work/t_small.onnx" --order; then
  jq -r '.executed[]' "$work/order.json" >"$work/order.txt"
  late="$("$py" "$ort/copy_lateness.py" "$work/sgd/transformer.onnx" "$work/t_small.onnx" "$work/order.txt")"
  [ "$(jq '.late_fraction >= 0.9 and .gap_median <= 1' <<<"$late")" = true ] &&
    ok "the runtime runs the copies late: $(jq -c "{copies, gap_median, gap_p90, late_fraction}" <<<"$late")" || bad "copies run early: $late"
else
  bad "train_run.mjs --order: $(cat "$work/order.err")"
fi

# olla-onnx's own rewrite (--memory-limit): bit-identical outputs; a lower heap
# wherever the plan lowers what ONNX Runtime allocates (its report's
# prediction) by more than the runtime's fixed overhead.
# limit NAME MODEL LIMIT
limit() {
  local name="$1" model="$2" lim="$3" out rc predicted saved
  if ! "$OLLA" -q --memory-limit "$lim" --report "$work/$name.report.json" "$model" "$work/$name.onnx" \
       >"$work/$name.olla" 2>&1; then
    bad "$name: olla-onnx --memory-limit $lim: $(cat "$work/$name.olla")"; return
  fi
  out="$(node "$ort/train_compare.mjs" "$model" "$work/$name.onnx" 2>&1)"; rc=$?
  if [ "$rc" -ne 0 ] || [ "$(jq -r .identical <<<"$out")" != true ]; then
    bad "$name: the written model's outputs differ (exit $rc): $out"; return
  fi
  predicted=$(jq '.input_ort_allocated_bytes - .ort_allocated_bytes' "$work/$name.report.json")
  saved="$(jq .heap_saved_bytes <<<"$out")"
  ok "$name: $(jq .recomputed_nodes "$work/$name.report.json") nodes recomputed, $(jq .outputs <<<"$out") outputs bit-identical"
  if [ "$predicted" -gt "$overhead" ]; then
    [ "$saved" -gt 0 ] && ok "$name: heap lower by $saved bytes (predicted $predicted > the fixed overhead $overhead)" ||
      bad "$name: the plan lowers ORT's allocation by $predicted bytes, the heap by $saved"
  else
    ok "$name: predicted saving $predicted is within the fixed overhead $overhead; heap change $saved not judged"
  fi
}
OLLA="${OLLA:?OLLA must name the olla-onnx binary}"
limit transformer_80 "$work/mid/transformer.onnx" 80%
limit transformer_60 "$work/mid/transformer.onnx" 60%
limit cnn_60 "$work/mid/cnn.onnx" 60%
# Over three runs in one session with the memory pattern on, where the later
# runs allocate the pattern's blocks at once, the heap is lower too.
for name in transformer_60 cnn_60; do
  kind="${name%_60}"
  out="$(node "$ort/train_compare.mjs" "$work/mid/$kind.onnx" "$work/$name.onnx" --pattern on --runs 3 2>&1)"; rc=$?
  [ "$rc" -eq 0 ] && [ "$(jq .heap_saved_bytes <<<"$out")" -gt 0 ] &&
    ok "$name, memory pattern on, three runs: outputs bit-identical, heap $(jq -c .a.heap_bytes_runs <<<"$out") -> $(jq -c .b.heap_bytes_runs <<<"$out")" ||
    bad "$name, memory pattern on, three runs: exit $rc: $out"
done

# Where the copies are listed matters: listed after the producer of their
# reader's gradient input (--place consumer) they run before that gradient's
# chain; listed before the backward pass (the default) right before their reader.
for place in consumer backward-start; do
  "$py" "$ort/remat_by_hand.py" "$work/sgd/cnn.onnx" "$work/c_$place.onnx" --keep 'relu|pool' --place "$place" >/dev/null &&
    run "c_$place" "$work/c_$place.onnx" --order && jq -r '.executed[]' "$work/c_$place.json" >"$work/c_$place.txt" &&
    "$py" "$ort/copy_lateness.py" "$work/sgd/cnn.onnx" "$work/c_$place.onnx" "$work/c_$place.txt" >"$work/c_$place.late" ||
    bad "cnn --place $place: $(cat "$work/c_$place.err" 2>/dev/null)"
done
conv_gaps() { jq -c '[.gaps[] | select(.[2] == "Conv") | .[0]]' "$work/c_$1.late"; }
[ "$(jq '[.gaps[] | select(.[2] == "Conv") | .[0]] | length > 0 and all(. == 0)' "$work/c_backward-start.late")" = true ] &&
  [ "$(jq '[.gaps[] | select(.[2] == "Conv") | .[0]] | any(. > 0)' "$work/c_consumer.late")" = true ] &&
  ok "Conv copies listed before the backward pass run right before their readers (gaps $(conv_gaps backward-start)); listed before their readers they run earlier (gaps $(conv_gaps consumer))" ||
  bad "copy placement: backward-start $(cat "$work/c_backward-start.late"), consumer $(cat "$work/c_consumer.late")"

# A rewrite that changes what is computed is reported, naming the outputs.
"$py" "$src/scripts/alter_initializer.py" --name fc1.scale "$work/sgd/mlp.onnx" "$work/mlp_scale.onnx" >/dev/null 2>&1
out="$(node "$ort/train_compare.mjs" "$work/sgd/mlp.onnx" "$work/mlp_scale.onnx" 2>&1)"; rc=$?
[ "$rc" -eq 1 ] && grep -q '"identical":false' <<<"$out" && grep -q "'loss': output bytes differ" <<<"$out" &&
  ok "a one-ulp change of a constant is reported, naming the outputs" ||
  bad "train_compare.mjs on a changed constant: exit $rc: $out"
out="$(node "$ort/train_compare.mjs" "$work/sgd/mlp.onnx" "$work/sgd/cnn.onnx" 2>&1)"; rc=$?
[ "$rc" -eq 1 ] && grep -q "input of B only" <<<"$out" && ok "models with other inputs are not identical" ||
  bad "train_compare.mjs mlp cnn: exit $rc: $out"

# --- Traced steps' ATen nodes written with ONNX operators (replace_aten.py):
# the loss, its gradient (ignored targets included) and MaxPoolGrad as
# numpy computes them; an ATen operator without a replacement is named.
"$py" - "$work" <<'EOF'
import sys
import onnx
from onnx import TensorProto, helper
d = sys.argv[1]
F, I = TensorProto.FLOAT, TensorProto.INT64
vi = helper.make_tensor_value_info
aten = lambda op, ins, outs, **kw: helper.make_node("ATen", ins, outs, name=op + "_n", domain="org.pytorch.aten",
                                                    operator=op, overload_name="default", **kw)
nodes = [
    helper.make_node("LogSoftmax", ["x"], ["logp"], axis=1),
    aten("nll_loss_forward", ["logp", "y"], ["loss", "total"], reduction=1, ignore_index=1),
    aten("ones_like", ["loss"], ["one"]),
    aten("nll_loss_backward", ["one", "logp", "y", "", "total"], ["dlogp"], reduction=1, ignore_index=1),
    aten("empty", [], ["reserve"], size=[0]),
    helper.make_node("MaxPool", ["img"], ["pooled", "idx"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("MaxPoolGrad", ["dpool", "idx"], ["dimg"], domain="com.microsoft"),
]
outs = [vi("loss", F, []), vi("total", F, []), vi("dlogp", F, [6, 4]), vi("reserve", TensorProto.UINT8, [0]),
        vi("pooled", F, [1, 2, 2, 2]), vi("dimg", F, [1, 2, 4, 4])]
g = helper.make_graph(nodes, "aten_step", [vi("x", F, [6, 4]), vi("y", I, [6]), vi("img", F, [1, 2, 4, 4]),
                                           vi("dpool", F, [1, 2, 2, 2])], outs,
                      value_info=[vi("logp", F, [6, 4]), vi("one", F, []), vi("idx", I, [1, 2, 2, 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1),
                                        helper.make_opsetid("org.pytorch.aten", 1)])
m.ir_version = 8
onnx.save(m, f"{d}/aten_step.onnx")
m.graph.node[2].CopyFrom(aten("silu", ["loss"], ["one"]))
onnx.save(m, f"{d}/aten_silu.onnx")
EOF
if "$py" "$ort/replace_aten.py" "$work/aten_step.onnx" "$work/aten_onnx.onnx" >"$work/aten.out" 2>&1 &&
   run aten_run "$work/aten_onnx.onnx" --dump "$work/aten.dump"; then
  out="$("$py" - "$work/aten.dump" <<'EOF'
import json, sys
import numpy as np
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
t = {e["name"]: np.load(d + "/" + e["file"]) for e in m["inputs"] + m["outputs"]}
x, y = t["x"].astype(np.float64), t["y"]
logp = x - np.log(np.exp(x).sum(1, keepdims=True))
kept = y != 1
loss = -logp[np.arange(6), y][kept].sum() / kept.sum()
grad = np.zeros((6, 4))
grad[np.arange(6)[kept], y[kept]] = -1.0 / kept.sum()
img, dpool = t["img"], t["dpool"]
dimg = np.zeros_like(img)
for c in range(2):
    for i in range(2):
        for j in range(2):
            win = img[0, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
            a, b = np.unravel_index(int(win.argmax()), (2, 2))
            dimg[0, c, 2 * i + a, 2 * j + b] += dpool[0, c, i, j]
bad = []
if not 0 < kept.sum() < 6:
    bad.append(f"the seed gives {kept.sum()} kept targets of 6; the mask is not exercised")
if abs(float(t["loss"]) - loss) > 1e-5:
    bad.append(f"loss {float(t['loss'])} != {loss}")
if float(t["total"]) != kept.sum():
    bad.append(f"total weight {float(t['total'])} != {kept.sum()}")
if np.abs(t["dlogp"] - grad).max() > 1e-6:
    bad.append(f"gradient off by {np.abs(t['dlogp'] - grad).max()}")
if np.abs(t["dimg"] - dimg).max() > 0:
    bad.append("MaxPoolGrad differs")
if t["reserve"].shape != (0,) or t["reserve"].dtype != np.uint8:
    bad.append(f"empty gave {t['reserve'].dtype}{t['reserve'].shape}")
print("; ".join(bad) if bad else f"loss {loss:.6f} over {kept.sum()} of 6 targets")
EOF
)"
  [[ "$out" == loss* ]] && ok "replace_aten.py: the step runs; $out, its gradient and MaxPoolGrad as numpy computes them" ||
    bad "replace_aten.py: $out"
else
  bad "replace_aten.py: $(cat "$work/aten.out" "$work/aten_run.err" 2>/dev/null)"
fi
"$py" "$ort/replace_aten.py" "$work/aten_silu.onnx" "$work/aten_x.onnx" >"$work/aten.out" 2>&1; rc=$?
[ "$rc" -eq 1 ] && grep -q "ATen operator silu ('silu_n') has no replacement" "$work/aten.out" &&
  ok "replace_aten.py names an ATen operator it has no replacement for" || bad "replace_aten.py on silu: exit $rc: $(cat "$work/aten.out")"

# --- Bad input.
# expect CODE PATTERN ARGS...: train_run.mjs exits CODE and says PATTERN on stderr.
expect() {
  local code="$1" pattern="$2"; shift 2
  node "$ort/train_run.mjs" "$@" >"$work/e.out" 2>"$work/e.err"; local rc=$?
  if [ "$rc" -eq "$code" ] && grep -qE -- "$pattern" "$work/e.err"; then ok "train_run.mjs $* -> $rc"
  else bad "train_run.mjs $*: exit $rc (expected $code), stderr: $(cat "$work/e.err")"; fi
}
"$py" - "$work" <<'EOF'
import sys
import onnx
from onnx import TensorProto, helper
d = sys.argv[1]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
def save(name, node, inputs, opsets):
    m = helper.make_model(helper.make_graph([node], "g", inputs, [y]),
                          opset_imports=[helper.make_opsetid(k, v) for k, v in opsets])
    m.ir_version = 8
    onnx.save(m, f"{d}/{name}.onnx")
drop = helper.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop", seed=7)
m = helper.make_model(helper.make_graph([drop], "g", [x], [y], [
        helper.make_tensor("ratio", TensorProto.FLOAT, [], [0.5]), helper.make_tensor("train", TensorProto.BOOL, [], [True])]),
    opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, f"{d}/dropout.onnx")
save("aten", helper.make_node("ATen", ["x"], ["y"], name="relu_aten", domain="org.pytorch.aten", operator="relu"),
     [x], [("", 17), ("org.pytorch.aten", 1)])
seq = helper.make_value_info("s", helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3])))
save("sequence", helper.make_node("SequenceAt", ["s", "i"], ["y"], name="at"),
     [seq, helper.make_tensor_value_info("i", TensorProto.INT64, [])], [("", 17)])
EOF
expect 2 "cannot open .*: no such file" "$work/none.onnx"
printf 'not a model' >"$work/garbage.onnx"
expect 1 "not a readable ONNX model" "$work/garbage.onnx"
expect 1 "operator org.pytorch.aten:ATen has no kernel .*'relu_aten'" "$work/aten.onnx"
expect 1 "input 's' is a sequence" "$work/sequence.onnx"
expect 2 "dimension 'batch' of input 'x' is not bound; give --dim batch=N" "$work/acc/mlp.onnx"
expect 2 "--opt takes one of" "$work/sgd/mlp.onnx" --opt fast
expect 2 "--dim takes name=value" "$work/sgd/mlp.onnx" --dim batch
expect 2 "--runs takes a positive integer, got '0'" "$work/sgd/mlp.onnx" --runs 0
expect 2 "--pattern takes on or off, got 'maybe'" "$work/sgd/mlp.onnx" --pattern maybe
expect 2 "--order reports one run's order; give it without --runs 2" "$work/sgd/mlp.onnx" --order --runs 2
expect 1 "output 'y' of run 2 differs from the first run's .*draws new numbers each run" "$work/dropout.onnx" --runs 2
run drop1 "$work/dropout.onnx" && ok "seeded Dropout runs once" || bad "dropout.onnx, one run: $(cat "$work/drop1.err")"
cp "$ort/node_modules/onnxruntime-web/dist/cjs/ort.training.wasm.min.js" "$work/bundle.js"
sed -i 's/var b=d\*(1+\.2\/p);/&&/' "$work/bundle.js"
OLLA_ORT_TRAINING_BUNDLE="$work/bundle.js" expect 3 "occurs 2 times, expected exactly once" "$work/sgd/mlp.onnx"
out="$(node "$ort/train_compare.mjs" "$work/sgd/mlp.onnx" 2>&1)"; rc=$?
[ "$rc" -eq 2 ] && grep -q "give exactly two models" <<<"$out" && ok "train_compare.mjs with one model is a usage error" ||
  bad "train_compare.mjs one model: exit $rc: $out"
out="$(node "$ort/train_compare.mjs" "$work/sgd/mlp.onnx" "$work/aten.onnx" 2>&1)"; rc=$?
[ "$rc" -eq 3 ] && grep -q "aten.onnx could not be run" <<<"$out" && grep -q "ATen has no kernel" <<<"$out" &&
  ok "train_compare.mjs names the model that cannot run" || bad "train_compare.mjs with an unrunnable model: exit $rc: $out"

cli_finish "ort training"
