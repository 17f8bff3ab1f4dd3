#!/usr/bin/env bash
# The ONNX Runtime training artifacts of the shared corpus ($OLLA_CORPUS/
# ort-training) in the training WebAssembly build (tests/ort/train_run.mjs):
# - every *training_model.onnx runs (symbolic batch_size bound to 4), twice
#   with the same output hashes and heap figure, also with its accumulated
#   gradients exposed as outputs (expose_accumulators.py), whose values must
#   then differ from the buffers they were fed (the step computed something);
# - recomputation by hand of every forward activation (remat_by_hand.py, loss
#   = the first graph output) leaves every output bit-identical;
# - the *optimizer_model.onnx files cannot run: their inputs are sequences,
#   which the web API cannot feed, and the harness says so;
# - the traced steps of $OLLA_CORPUS/train (batch 1) do not load: their
#   org.pytorch.aten:ATen nodes have no kernel, and the harness names it.
# Skipped (77) without the corpus, node or onnxruntime-web.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
corpus="${OLLA_CORPUS:-$src/../shared/corpus}"
py=/usr/bin/python3
if [ ! -d "$corpus/ort-training" ]; then echo "skipped: no corpus at $corpus/ort-training"; exit 77; fi
. "$src/tests/ort/ort_env.sh"
ort_training_skip_unless_ready
. "$src/tests/cli/lib.sh"
cli_tmp
work=$tmp
if ! "$py" -c 'import onnx' 2>/dev/null; then
  echo "FAILED: /usr/bin/python3 cannot import onnx (bash scripts/setup.sh --test installs it)"; exit 1
fi
run() {
  local name="$1"; shift
  node "$ort/train_run.mjs" "$@" >"$work/$name.json" 2>"$work/$name.err"
}
field() { jq -r "$1" "$work/$2.json"; }

n=0
for model in "$corpus"/ort-training/*training_model.onnx; do
  [ -f "$model" ] || continue
  n=$((n + 1))
  base="$(basename "$model" .onnx)"
  if ! run "$base.1" "$model" --dim batch_size=4 || ! run "$base.2" "$model" --dim batch_size=4; then
    bad "$base does not run: $(cat "$work/$base.1.err" "$work/$base.2.err")"; continue
  fi
  [ "$(field '[.outputs[].sha256]|join(",")' "$base.1")" = "$(field '[.outputs[].sha256]|join(",")' "$base.2")" ] &&
    [ "$(field .heap_bytes "$base.1")" = "$(field .heap_bytes "$base.2")" ] &&
    ok "$base: runs, $(field '.outputs|length' "$base.1") outputs and heap $(field .heap_bytes "$base.1") the same in two processes" ||
    bad "$base: two runs differ"
  if ! "$py" "$ort/expose_accumulators.py" "$model" "$work/$base.x.onnx" >/dev/null ||
     ! run "$base.x" "$work/$base.x.onnx" --dim batch_size=4 --dump "$work/$base.x.dump"; then
    bad "$base with exposed gradients: $(cat "$work/$base.x.err" 2>/dev/null)"; continue
  fi
  changed="$("$py" - "$work/$base.x.dump" <<'EOF'
import json, sys
import numpy
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
ins = {e["name"]: numpy.load(d + "/" + e["file"]) for e in m["inputs"]}
n = 0
for e in m["outputs"]:
    if e["name"].endswith(".buffer.out"):
        out = numpy.load(d + "/" + e["file"])
        buf = ins[e["name"][:-len(".out")]]
        n += int(numpy.isfinite(out).all() and not numpy.array_equal(out, buf))
print(n)
EOF
)"
  exposed="$(field '[.outputs[]|select(.name|endswith(".buffer.out"))]|length' "$base.x")"
  [ "$exposed" -gt 0 ] && [ "$changed" = "$exposed" ] &&
    ok "$base: $exposed accumulated gradients exposed, finite, each changed its buffer" ||
    bad "$base: $changed of $exposed exposed gradient buffers changed"
  loss="$("$py" -c 'import onnx, sys; print(onnx.load(sys.argv[1]).graph.output[0].name)' "$model")"
  if "$py" "$ort/remat_by_hand.py" "$work/$base.x.onnx" "$work/$base.r.onnx" --keep 'a^' --loss "$loss" >"$work/$base.r.txt"; then
    out="$(node "$ort/train_compare.mjs" "$work/$base.x.onnx" "$work/$base.r.onnx" --dim batch_size=4 2>&1)"
    [ "$(jq -r .identical <<<"$out" 2>/dev/null)" = true ] &&
      ok "$base: recomputing $(jq .recomputed_tensors "$work/$base.r.txt") activations leaves the outputs bit-identical" ||
      bad "$base: recomputed by hand: $out"
  else
    bad "$base: remat_by_hand.py: $(cat "$work/$base.r.txt")"
  fi
done
[ "$n" -gt 0 ] && ok "$n training artifacts" || bad "no *training_model.onnx in $corpus/ort-training"

for model in "$corpus"/ort-training/*optimizer_model.onnx; do
  [ -f "$model" ] || continue
  run opt "$model"; rc=$?
  [ "$rc" -eq 1 ] && grep -q "is a sequence; the harness can feed tensors only" "$work/opt.err" &&
    ok "$(basename "$model"): cannot run, sequence inputs (said)" || bad "$(basename "$model"): exit $rc: $(cat "$work/opt.err")"
done

for model in "$corpus"/train/*_bs1.onnx; do
  [ -f "$model" ] || continue
  run traced "$model"; rc=$?
  [ "$rc" -eq 1 ] && grep -q "operator org.pytorch.aten:ATen has no kernel" "$work/traced.err" &&
    ok "$(basename "$model"): does not load, ATen named" || bad "$(basename "$model"): exit $rc: $(cat "$work/traced.err")"
done

cli_finish "ort training corpus"
