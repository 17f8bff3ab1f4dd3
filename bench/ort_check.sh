#!/usr/bin/env bash
# Cost of the ONNX Runtime equivalence check: wall time of one
# `node tests/ort/compare.mjs A B` (load both models, generate inputs, run
# both, compare) for every model of models/ and of the corpus' infer/ folder,
# B being a node-permuted copy of A. Prints a Markdown table; each time is
# the median of RUNS runs (default 3), measured with bash's EPOCHREALTIME.
#
#   bench/ort_check.sh [corpus-dir]      (needs node, tests/ort/node_modules, /usr/bin/python3 with onnx)
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
corpus="${1:-$src/../shared/corpus}"
runs="${RUNS:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
models=("$src"/models/*.onnx)
[ -d "$corpus/infer" ] && models+=("$corpus"/infer/*.onnx)

echo "| model | nodes | result | median s | runs (s) |"
echo "|---|---:|---|---:|---|"
for in in "${models[@]}"; do
  name="$(basename "$in" .onnx)"
  wd="$work/$name"; mkdir -p "$wd"
  for data in "$(dirname "$in")"/*.bin; do [ -e "$data" ] && cp "$data" "$wd/"; done
  "/usr/bin/python3" "$src/scripts/permute_nodes.py" "$in" "$wd/$name.onnx" --seed 3 2>/dev/null
  nodes="$(/usr/bin/python3 -c "import onnx,sys; print(len(onnx.ModelProto.FromString(open(sys.argv[1],'rb').read()).graph.node))" "$in")"
  times=() result=""
  for _ in $(seq "$runs"); do
    t0=$EPOCHREALTIME
    result="$(node "$src/tests/ort/compare.mjs" "$in" "$wd/$name.onnx" --dim batch=2 2>/dev/null | cut -d' ' -f1)" || true
    t1=$EPOCHREALTIME
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')")
  done
  median="$(printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
  echo "| $name | $nodes | $result | $median | ${times[*]} |"
done
