#!/usr/bin/env bash
# LLM training steps: GPT-2-style decoders of 12 to 192 layers with SGD and
# AdamW, traced by scripts/make_llm_step.py (width 256, 4 heads, sequence
# 128, vocabulary 2,048), planned with --runtime listed. For each: nodes,
# the planned peak, the proven lower bound and the gap between them, the
# arena's fragmentation over the peak, what ended the ordering, wall and
# CPU seconds and the tool's peak RSS (farm-bench medians of RUNS runs), and
# whether a run beside two busy loops writes the same plan. Prints a
# markdown table for bench/RESULTS.md.
#
#   bench/llm_bench.sh [OLLA_BINARY] [MODEL_DIR] [RUNS] [ARCH] [LAYERS ...]
#   (defaults: build/olla-onnx, /tmp/olla-llm-models, 3, gpt2, 12 24 48 96 192)
#
# Models are traced once into MODEL_DIR (the 192-layer AdamW step takes
# minutes) and reused; extra olla-onnx options go in $OLLA_OPTS (e.g.
# "--runtime ort" for the default runtime). Other shapes come from the
# environment: WIDTH, HEADS, SEQ and VOCAB (each passed to the script when
# set, and then named in the model's file name and the header line), e.g.
# GPT-2 small: WIDTH=768 HEADS=12 SEQ=512 VOCAB=50257; OPTIMIZERS (default
# "sgd adamw") picks the updates.
set -uo pipefail
cd "$(dirname "$0")/.."
OLLA=$(realpath "${1:-build/olla-onnx}")
DIR=${2:-/tmp/olla-llm-models}
RUNS=${3:-3}
ARCH=${4:-gpt2}
shift 4 2>/dev/null || shift $#
layers=("$@")
[ ${#layers[@]} -gt 0 ] || layers=(12 24 48 96 192)
OPTS=${OLLA_OPTS:---runtime listed}
PY=/usr/bin/python3
shape=() tag=""
for v in WIDTH HEADS SEQ VOCAB; do
  [ -n "${!v:-}" ] || continue
  shape+=("--${v,,}" "${!v}") tag+="_${v:0:1}${!v}"
done
mkdir -p "$DIR"
tmp=$(mktemp -d)
busy=()
cleanup() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $OLLA $OPTS; shape: ${shape[*]:-defaults of scripts/make_llm_step.py}"
echo
echo "| model | nodes | peak | lower bound | gap | arena | fragmentation | ordering ended by | wall s | cpu s | peak RSS MiB | plan beside 2 busy loops |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for L in "${layers[@]}"; do
  for opt in ${OPTIMIZERS:-sgd adamw}; do
    name=${ARCH}${tag,,}_${L}_${opt}
    m=$DIR/$name.onnx
    [ -s "$m" ] || $PY scripts/make_llm_step.py --arch "$ARCH" --layers "$L" --optimizer "$opt" "${shape[@]}" "$m" 2>/dev/null || {
      echo "| $name | tracing failed |"; continue; }
    # shellcheck disable=SC2086
    "$OLLA" -q $OPTS --report "$tmp/r.json" "$m" "$tmp/a.onnx" || { echo "| $name | olla-onnx failed |"; continue; }
    # the same run beside two busy loops: the work budgets, not the clock, decide
    for _ in 1 2; do (while :; do :; done) & busy+=($!); done
    # shellcheck disable=SC2086
    "$OLLA" -q $OPTS "$m" "$tmp/b.onnx"
    for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done; busy=()
    same=$($PY - "$tmp/a.onnx" "$tmp/b.onnx" <<'PY'
import sys, onnx
a, b = (onnx.load(p) for p in sys.argv[1:3])
meta = lambda m: {p.key: p.value for p in m.metadata_props}['olla.plan']
print("same" if meta(a) == meta(b) and [n.name for n in a.graph.node] == [n.name for n in b.graph.node] else "DIFFERENT")
PY
)
    # shellcheck disable=SC2086
    fb=$(farm-bench -n "$RUNS" --warmup 0 --timeout 600 -- "$OLLA" -q $OPTS "$m" "$tmp/c.onnx" 2>&1)
    med() { echo "$fb" | awk -v k="$1" '$1 == "A" && $2 == k {print $5}' | head -1; }
    wall=$(med wall); cpu=$(med cpu); peak=$(med peak)
    $PY - "$tmp/r.json" "$name" "$wall" "$cpu" "$peak" "$same" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
name, wall, cpu, peak, same = sys.argv[2:7]
pk, lb, ar = r["peak_bytes"], r["lower_bound_bytes"], r["arena_bytes"]
gap = f"{100 * (pk - lb) / lb:.3f}%" if lb else "-"
frag = f"{100 * (ar - pk) / ar:.3f}%"
mib = lambda b: f"{b / 2**20:.2f} MiB"
print(f"| {name} | {r['nodes']} | {mib(pk)} | {mib(lb) if lb else '-'} | {gap} | {mib(ar)} | {frag} | "
      f"{r['schedule_stopped_by']} | {wall} | {cpu} | {peak} | {same} |")
PY
  done
done
