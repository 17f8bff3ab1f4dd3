#!/usr/bin/env bash
# The `ort` model of passes/runtime/olla_exec_order.h against ONNX Runtime's
# profiler: for every model of models/, of $OLLA_CORPUS/infer (when present)
# and of tests/tools/make_exec_order_models.py, the order olla-exec-order
# predicts must be the order in which ORT's kernels ran (CPU, sequential,
# graph optimizations off; the profiler's "Node" events ending in
# "_kernel_time", kernels of subgraphs left out), on
#   - the model as given,
#   - a copy listed in another topological order (scripts/permute_nodes.py),
#   - two copies listed so that ORT runs a chosen depth-first order
#     (olla-exec-order --steer: random choices, the listing of
#     olla_exec_listing_for): ORT must run exactly the chosen order,
#   - the copy listed by the order search (olla-exec-order --search, symbolic
#     batch dims bound to 2): ORT must run the order the search reports.
# A model ORT cannot run is counted as skipped. Closing line:
# "exec order: N passed, M skipped, F failed".
#
# Environment: OLLA_EXEC_ORDER (the tool, set by ctest), OLLA_SOURCE_DIR,
# OLLA_CORPUS (optional), OLLA_ORT_MODULES (the node_modules folder holding
# onnxruntime-node; default tests/ort/node_modules). Exits 77 (skipped) with
# a message without node, onnxruntime-node or /usr/bin/python3 with onnx.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
tool="${OLLA_EXEC_ORDER:?OLLA_EXEC_ORDER must name the olla-exec-order binary}"
modules="${OLLA_ORT_MODULES:-$src/tests/ort/node_modules}"
py=/usr/bin/python3
if ! command -v node >/dev/null || [ ! -d "$modules/onnxruntime-node" ]; then
  echo "skipped: node or $modules/onnxruntime-node missing (run scripts/setup_ort.sh)"; exit 77
fi
if ! "$py" -c 'import onnx' 2>/dev/null; then
  echo "skipped: $py cannot import onnx (apt-get install python3-onnx)"; exit 77
fi
[ -x "$tool" ] || { echo "FAIL: $tool is not executable"; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The profiler's kernel order of the main graph. A kernel that started after
# another started and ended before it ended ran inside it (a subgraph of
# If/Loop/Scan); only models with such nodes are filtered, so that two
# zero-length kernels of one microsecond are never mistaken for nesting.
cat >"$work/profile.mjs" <<EOF
import fs from 'node:fs';
import path from 'node:path';
import ort from '$modules/onnxruntime-node/dist/index.js';
const [model, dir, nested] = process.argv.slice(2);
let session;
try {
  session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], executionMode: 'sequential', graphOptimizationLevel: 'disabled',
    intraOpNumThreads: 1, interOpNumThreads: 1, enableProfiling: true,
    profileFilePrefix: path.join(dir, 'profile'), logSeverityLevel: 3 });
} catch (e) { console.log('SKIP cannot load: ' + String(e.message).split('\n')[0]); process.exit(77); }
const make = { float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array,
               int16: Int16Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array, uint16: Uint16Array };
const feeds = {};
for (const m of session.inputMetadata) {
  const shape = (m.shape || []).map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
  const n = shape.reduce((a, b) => a * b, 1);
  if (!make[m.type]) { console.log('SKIP input type ' + m.type); process.exit(77); }
  const data = new make[m.type](n);
  if (m.type === 'float32' || m.type === 'float64') for (let i = 0; i < n; i++) data[i] = ((i * 7919) % 200) / 100 - 1;
  feeds[m.name] = new ort.Tensor(m.type, data, shape);
}
try { await session.run(feeds); } catch (e) { console.log('SKIP cannot run: ' + String(e.message).split('\n')[0]); process.exit(77); }
session.endProfiling();
await session.release();
const file = fs.readdirSync(dir).find((f) => f.startsWith('profile') && f.endsWith('.json'));
const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))
  .filter((e) => e.cat === 'Node' && typeof e.name === 'string' && e.name.endsWith('_kernel_time'));
fs.rmSync(path.join(dir, file));
let top = [];
for (const e of events) {
  if (nested === '1') top = top.filter((t) => !(t.ts > e.ts && t.ts + t.dur <= e.ts + e.dur));
  top.push(e);
}
process.stdout.write(top.map((e) => e.name.slice(0, -'_kernel_time'.length) + '\n').join(''));
EOF

has_subgraphs() {
  "$py" -c 'import onnx,sys; g=onnx.load(sys.argv[1], load_external_data=False).graph; sys.exit(0 if any(a.type in (5, 10) for n in g.node for a in n.attribute) else 1)' "$1"
}

passed=0 skipped=0 failed=0
# compare NAME MODEL EXPECTED_FILE: ORT's order of MODEL must equal the file
compare() {
  local name="$1" model="$2" want="$3" nested=0 out rc
  has_subgraphs "$model" && nested=1
  mkdir -p "$work/prof"
  out="$(node "$work/profile.mjs" "$model" "$work/prof" "$nested" 2>&1)"
  rc=$?
  if [ $rc -eq 77 ]; then
    skipped=$((skipped + 1)); echo "skip $name: ${out#SKIP }"; return
  elif [ $rc -ne 0 ]; then
    failed=$((failed + 1)); echo "FAIL $name: the profiler run failed: $(echo "$out" | tail -1)"; return
  fi
  printf '%s\n' "$out" >"$work/got.txt"
  if cmp -s "$want" "$work/got.txt"; then
    passed=$((passed + 1)); echo "ok   $name: $(wc -l <"$want") kernels in the predicted order"
  else
    failed=$((failed + 1)); echo "FAIL $name: ORT ran another order (predicted < > ORT):"
    diff "$want" "$work/got.txt" | head -6
  fi
}

"$py" "$src/tests/tools/make_exec_order_models.py" "$work/gen" || { echo "FAIL: cannot make the test models"; exit 1; }
models=("$src"/models/*.onnx "$work"/gen/*.onnx)
if [ -n "${OLLA_CORPUS:-}" ] && [ -d "$OLLA_CORPUS/infer" ]; then
  models+=("$OLLA_CORPUS"/infer/*.onnx)
else
  echo "note: corpus not found; only models/ and the generated models are checked"
fi

for model in "${models[@]}"; do
  name="$(basename "$model" .onnx)"
  # copies get the model folder's external data files beside them
  copydir="$work/copies"
  mkdir -p "$copydir"
  for data in "$(dirname "$model")"/*.bin; do [ -f "$data" ] && cp -f "$data" "$copydir/"; done
  if "$tool" "$model" >"$work/want.txt" 2>"$work/err.txt"; then
    compare "$name" "$model" "$work/want.txt"
  else
    failed=$((failed + 1)); echo "FAIL $name: olla-exec-order: $(cat "$work/err.txt")"; continue
  fi
  permuted="$copydir/${name}_permuted.onnx"
  if "$py" "$src/scripts/permute_nodes.py" "$model" "$permuted" --seed 7 >/dev/null 2>&1 &&
     "$tool" "$permuted" >"$work/want.txt" 2>"$work/err.txt"; then
    compare "$name (permuted)" "$permuted" "$work/want.txt"
  else
    failed=$((failed + 1)); echo "FAIL $name (permuted): cannot make or simulate the copy"
  fi
  rm -f "$permuted"
  for seed in 1 2; do
    steered="$copydir/${name}_steered.onnx"
    if "$tool" --steer "$seed" "$steered" "$model" >"$work/want.txt" 2>"$work/err.txt"; then
      compare "$name (steered, seed $seed)" "$steered" "$work/want.txt"
    else
      failed=$((failed + 1)); echo "FAIL $name (steered, seed $seed): $(cat "$work/err.txt")"
    fi
    rm -f "$steered"
  done
  # the converter's own output (its default, --runtime ort): ORT runs the
  # order the plan records (check recomputes it from the file; the
  # simulation must then be what the profiler shows)
  written="$copydir/${name}_olla.onnx"
  dims=$("$py" "$src/tests/tools/dim_names.py" "$model" batch=2 batch_size=2 seq=3)
  # shellcheck disable=SC2086
  if "$OLLA" -q --time-limit 20 $dims "$model" "$written" 2>"$work/err.txt" &&
     "$OLLA" check "$written" >/dev/null 2>>"$work/err.txt" && "$tool" "$written" >"$work/want.txt" 2>>"$work/err.txt"; then
    compare "$name (written by olla-onnx)" "$written" "$work/want.txt"
  else
    failed=$((failed + 1)); echo "FAIL $name (written by olla-onnx): $(cat "$work/err.txt")"
  fi
  rm -f "$written"
  searched="$copydir/${name}_searched.onnx"
  if "$tool" --dim batch=2 --search "$searched" "$model" >"$work/want.txt" 2>"$work/err.txt"; then
    compare "$name (searched)" "$searched" "$work/want.txt"
  else
    failed=$((failed + 1)); echo "FAIL $name (searched): $(cat "$work/err.txt")"
  fi
  rm -f "$searched"
done

echo "exec order: $passed passed, $skipped skipped, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
