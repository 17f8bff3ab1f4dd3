#!/usr/bin/env bash
# Installs ONNX Runtime for Node.js into tests/ort/node_modules, for the
# runtime equivalence check (tests/ort/compare.mjs, tests/cli/test_ort.sh).
#
#   scripts/setup_ort.sh
#
# Idempotent: when the pinned onnxruntime-node version is already installed
# and loads, it returns at once. The package's install script (which tries to
# download extra GPU binaries) is skipped with --ignore-scripts; the CPU
# binary shipped inside the package is all the check needs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ort_dir="$here/tests/ort"

command -v node >/dev/null || { echo "setup_ort.sh: node not found; install Node.js (18 or newer) and npm first" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup_ort.sh: npm not found; install npm first" >&2; exit 1; }

pinned="$(node -p "require('$ort_dir/package.json').dependencies['onnxruntime-node']")"
installed=""
if [ -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]; then
  installed="$(node -p "require('$ort_dir/node_modules/onnxruntime-node/package.json').version")"
fi
loads() { (cd "$ort_dir" && node -e "require('onnxruntime-node')" >/dev/null 2>&1); }

if [ "$installed" = "$pinned" ] && loads; then
  echo "setup_ort.sh: onnxruntime-node $pinned already installed in $ort_dir"
  exit 0
fi
echo "setup_ort.sh: installing onnxruntime-node $pinned into $ort_dir"
(cd "$ort_dir" && npm ci --ignore-scripts --no-audit --no-fund)
if ! loads; then
  echo "setup_ort.sh: onnxruntime-node installed but does not load in node; see 'cd $ort_dir && node -e \"require('onnxruntime-node')\"'" >&2
  exit 1
fi
echo "setup_ort.sh: onnxruntime-node $pinned ready"
