#!/usr/bin/env bash
# The options the ONNX Runtime tools share (tests/ort/options.mjs): its own
# cases (node --test tests/ort/options.test.mjs), then the --dim rule through
# every tool that reads --dim (compare.mjs, train_run.mjs, train_compare.mjs,
# measure.mjs, exec_order.mjs): each refuses a negative value, a fractional
# one and a name bound twice with the same message (exit 2), and accepts 0;
# a model whose batch is symbolic then runs at batch 0 (empty tensors) in both
# runtimes. Needs node; the tools over onnxruntime-node need
# tests/ort/node_modules, the training runs onnxruntime-web's training build
# (scripts/setup_ort.sh): without them those checks are not run (exit 77).
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
. "$src/tests/ort/ort_env.sh"
. "$src/tests/cli/lib.sh"
command -v node >/dev/null || cli_skip "node not found (install Node.js, then run scripts/setup_ort.sh)"
cli_tmp

out="$(node --test "$ort/options.test.mjs" 2>&1)"; rc=$?
cases="$(sed -n 's/^# pass \([0-9]*\)$/\1/p' <<<"$out")"
[ "$rc" -eq 0 ] && [ "${cases:-0}" -ge 8 ] && ok "options.test.mjs: $cases cases pass" ||
  bad "node --test options.test.mjs: exit $rc, ${cases:-0} passed: $(grep -A8 '^not ok' <<<"$out" | head -30)"

# expect CODE PATTERN TOOL ARGS...: the tool's exit code and a line of its output
expect() {
  local code="$1" pattern="$2" tool="$3"; shift 3
  local out rc
  out="$(node "$ort/$tool" "$@" 2>&1)"; rc=$?
  if [ "$rc" -ne "$code" ]; then bad "$tool $* exited $rc, expected $code: $out"; return 1; fi
  if ! grep -qE -- "$pattern" <<<"$out"; then bad "$tool $*: output lacks /$pattern/: $out"; return 1; fi
  ok "$tool $* -> $rc"
}

m="$src/models/symbolic_dims.onnx"   # x: [batch, 16, 32]
rule="--dim takes name=value with a non-negative integer value"
tools=(train_run.mjs:1 train_compare.mjs:2)
if [ -d "$ort/node_modules/onnxruntime-node" ]; then
  tools+=(compare.mjs:2 measure.mjs:1 exec_order.mjs:1)
else
  cli_missing "tests/ort/node_modules has no onnxruntime-node: compare.mjs, measure.mjs, exec_order.mjs not run (scripts/setup_ort.sh)"
fi
for spec in "${tools[@]}"; do
  tool=${spec%:*}; n=${spec#*:}
  models=("$m"); missing=("$tmp/none.onnx")
  [ "$n" -eq 2 ] && { models+=("$m"); missing+=("$tmp/none.onnx"); }
  expect 2 "^$tool: $rule, got 'batch=-1': a dimension cannot be negative$" "$tool" "${models[@]}" --dim batch=-1
  expect 2 "^$tool: $rule, got 'batch=2.5': '2.5' is not an integer$" "$tool" "${models[@]}" --dim batch=2.5
  expect 2 "^$tool: $rule, got 'batch'$" "$tool" --dim batch "${models[@]}"
  expect 2 "^$tool: --dim batch=3: 'batch' is already bound to 2; give each name once$" "$tool" \
    --dim batch=2 "${models[@]}" --dim batch=3
  # 0 passes the option check (options come first): the complaint is the model
  expect 2 "^$tool: cannot open '$tmp/none.onnx': no such file" "$tool" --dim batch=0 "${missing[@]}"
done

# batch 0 runs: every tensor of the model is then empty (sha256 of no bytes)
empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
if [ -d "$ort/node_modules/onnxruntime-node" ]; then
  expect 0 "^PASS .*symbolic_dims.onnx: 1 outputs identical" compare.mjs "$m" "$m" --dim batch=0 &&
    { node "$ort/compare.mjs" "$m" "$m" --dim batch=0 2>&1 | grep -q "not bound" && bad "compare.mjs ignored --dim batch=0" || ok; }
  expect 0 "^MatMul_0$" exec_order.mjs "$m" --dim batch=0
fi
dist="$ort/node_modules/onnxruntime-web/dist"
if [ -f "$dist/cjs/ort.training.wasm.min.js" ] && [ -f "$dist/ort-training-wasm-simd.wasm" ]; then
  if expect 0 '"dims":\{"batch":0\}' train_run.mjs "$m" --dim batch=0; then
    out="$(node "$ort/train_run.mjs" "$m" --dim batch=0 2>/dev/null)"
    grep -q "\"name\":\"x\",\"dtype\":\"float32\",\"shape\":\[0,16,32\],\"sha256\":\"$empty\"" <<<"$out" &&
      grep -qE "\"outputs\":\[\{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":\[0,[0-9]+\],\"sha256\":\"$empty\"" <<<"$out" &&
      ok "train_run.mjs at batch 0: x [0,16,32] and y empty" || bad "train_run.mjs at batch 0: $out"
  fi
  expect 0 '^\{"identical":true,"outputs":1,' train_compare.mjs "$m" "$m" --dim batch=0
else
  cli_missing "onnxruntime-web's training build is not in tests/ort/node_modules: no training run at batch 0 (scripts/setup_ort.sh)"
fi
cli_finish "ort options"
