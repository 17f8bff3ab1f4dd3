#!/usr/bin/env bash
# Which part of the guarantee survives ONNX Runtime's graph optimizations.
# For every model of ../shared/corpus/infer (batch 32) and the bundled
# training graphs whose listing olla-onnx changes (models/cnn_train,
# mlp_train, unordered, at their own sizes), planned with
# olla-onnx's defaults: at each optimization level, the kernels ORT runs for
# the written model (its profiler, tests/ort/exec_order.mjs) that are nodes of
# the file (fused nodes get new names), and how many of them keep the plan's
# relative order (the longest run of them in the plan's order); and what ORT
# allocates for the input and for the written model (tests/ort/measure.sh).
#
#   bench/ort_opt_levels.sh [BUILD_DIR]      (default: build)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
corpus="${OLLA_CORPUS:-$here/../shared/corpus}"
src="$here" bin="$build"
. "$here/tests/ort/ort_env.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "| model | level | kernels run | of them file nodes | in the plan's order | ORT allocates: input | written | change |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for model in "$corpus"/infer/*.onnx "$here"/models/{cnn_train,mlp_train,unordered}.onnx; do
  name=$(basename "$model" .onnx)
  dims=$(/usr/bin/python3 "$here/tests/tools/dim_names.py" "$model" batch=32)
  # shellcheck disable=SC2086
  "$build/olla-onnx" -q $dims "$model" "$work/out.onnx" || continue
  for level in disabled basic extended all; do
    node "$ort/exec_order.mjs" "$work/out.onnx" --dim batch=32 --opt "$level" >"$work/ran.txt" 2>/dev/null || continue
    stats=$(/usr/bin/python3 - "$work/out.onnx" "$work/ran.txt" <<'PY'
import bisect, json, sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
nodes = list(m.graph.node)
plan = json.loads(next(p.value for p in m.metadata_props if p.key == "olla.plan"))
order = plan.get("order", list(range(len(nodes))))
# ORT names an unnamed node OpType_i, i its position among the non-Constant nodes
names, k = {}, 0
for i, n in enumerate(nodes):
    if n.op_type == "Constant":
        continue
    names[n.name if n.name else f"{n.op_type}_{k}"] = i
    k += 1
step = {node: s for s, node in enumerate(order)}
ran = [l.strip() for l in open(sys.argv[2]) if l.strip()]
seq = [step[names[r]] for r in ran if r in names]
tails = []  # longest increasing subsequence: the kernels that keep the plan's order
for x in seq:
    j = bisect.bisect_left(tails, x)
    tails[j:j + 1] = [x]
print(len(ran), len(seq), len(tails))
PY
)
    read -r total known kept <<<"$stats"
    in_m=$(json_int peak_bytes "$("$ort/measure.sh" --lib "$lib" "$model" --dim batch=32 --runs 1 --opt "$level" 2>/dev/null)")
    out_m=$(json_int peak_bytes "$("$ort/measure.sh" --lib "$lib" "$work/out.onnx" --dim batch=32 --runs 1 --opt "$level" 2>/dev/null)")
    ch=$(awk -v a="$out_m" -v b="$in_m" 'BEGIN { if (b == 0) print "n/a"; else printf "%+.2f%%", 100 * (a - b) / b }')
    echo "| $name | $level | $total | $known | $kept | $in_m | $out_m | $ch |"
  done
done
echo
echo "Load average at the end of the run: $(cut -d' ' -f1-3 /proc/loadavg)"
