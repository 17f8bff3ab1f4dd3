#!/usr/bin/env bash
# Installs ONNX Runtime for Node.js into tests/ort/node_modules: the pinned
# onnxruntime-node (the runtime equivalence check and the allocation
# measurements, tests/ort/compare.mjs, measure.mjs) and the pinned
# onnxruntime-web, whose training WebAssembly build runs training graphs
# (tests/ort/train_run.mjs). Versions and hashes: tests/ort/package.json and
# package-lock.json.
#
#   scripts/setup_ort.sh
#
# Idempotent: when the pinned versions are already installed and load, it
# returns at once. Install scripts are skipped with --ignore-scripts
# (onnxruntime-node's tries to download extra GPU binaries); the CPU binary
# inside onnxruntime-node and the .wasm files inside onnxruntime-web are all
# the checks need.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ort_dir="$here/tests/ort"

command -v node >/dev/null || { echo "setup_ort.sh: node not found; install Node.js (18 or newer) and npm first" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup_ort.sh: npm not found; install npm first" >&2; exit 1; }

pinned() { node -p "require('$ort_dir/package.json').dependencies['$1']"; }
installed() {
  if [ -f "$ort_dir/node_modules/$1/package.json" ]; then
    node -p "require('$ort_dir/node_modules/$1/package.json').version"
  fi
}
node_pin="$(pinned onnxruntime-node)"
web_pin="$(pinned onnxruntime-web)"
# onnxruntime-node loads; onnxruntime-web has its training bundle and wasm.
node_loads() { (cd "$ort_dir" && node -e "require('onnxruntime-node')" >/dev/null 2>&1); }
web_complete() {
  local dist="$ort_dir/node_modules/onnxruntime-web/dist"
  [ -f "$dist/cjs/ort.training.wasm.min.js" ] && [ -f "$dist/ort-training-wasm-simd.wasm" ]
}
ready() {
  [ "$(installed onnxruntime-node)" = "$node_pin" ] && [ "$(installed onnxruntime-web)" = "$web_pin" ] &&
    node_loads && web_complete
}

if ready; then
  echo "setup_ort.sh: onnxruntime-node $node_pin and onnxruntime-web $web_pin already installed in $ort_dir"
  exit 0
fi
echo "setup_ort.sh: installing onnxruntime-node $node_pin and onnxruntime-web $web_pin into $ort_dir"
(cd "$ort_dir" && npm ci --ignore-scripts --no-audit --no-fund)
if ! node_loads; then
  echo "setup_ort.sh: onnxruntime-node installed but does not load in node; see 'cd $ort_dir && node -e \"require('onnxruntime-node')\"'" >&2
  exit 1
fi
if ! web_complete; then
  echo "setup_ort.sh: onnxruntime-web installed without its training build (dist/cjs/ort.training.wasm.min.js, dist/ort-training-wasm-simd.wasm); see $ort_dir/node_modules/onnxruntime-web" >&2
  exit 1
fi
echo "setup_ort.sh: onnxruntime-node $node_pin and onnxruntime-web $web_pin ready"
