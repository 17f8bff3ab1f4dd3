#!/usr/bin/env bash
# Recomputation under a memory limit on training graphs: for each model,
#   1. bench/remat_bench.c: sqrt(n) checkpointing (the baseline) and
#      olla-onnx's search under the baseline's own peak; the search alone
#      under 80%, 60% and 50% of the no-limit peak, with the proven bound;
#   2. the command end to end at the default settings under 80%, 60% and
#      50%: fits or not, the written model's peak, extra FLOPs %, seconds,
#      status;
#   3. the tradeoff curve (olla-onnx tradeoff --points 6).
# usage: bench/remat_corpus.sh BUILD_DIR OUT_DIR [--runtime NAME] model.onnx ...
# Writes OUT_DIR/<model>.{bench,cli,curve}.txt and prints the tables.
set -u
B=$1; OUT=$2; shift 2
RT=ort
if [ "${1:-}" = "--runtime" ]; then RT=$2; shift 2; fi
SRC=$(cd "$(dirname "$0")/.." && pwd)
bash "$SRC/bench/build_remat_bench.sh" "$B" >/dev/null || exit 1
mkdir -p "$OUT"
PY=/usr/bin/python3
for m in "$@"; do
  name=$(basename "$m" .onnx)
  "$B/remat_bench" --runtime "$RT" "$m" >"$OUT/$name.bench.txt" 2>&1
  : >"$OUT/$name.cli.txt"
  for pct in 80 60 50; do
    rep="$OUT/$name.$pct.json"; rm -f "$rep"
    start=$(date +%s.%N)
    "$B/olla-onnx" -q --runtime "$RT" --memory-limit $pct% --report "$rep" "$m" "$OUT/$name.$pct.onnx" 2>"$OUT/$name.$pct.err"
    rc=$?
    end=$(date +%s.%N)
    secs=$($PY -c "print(f'{$end-$start:.1f}')")
    if [ $rc -eq 0 ]; then
      $PY - "$rep" "$name" "$pct" "$secs" >>"$OUT/$name.cli.txt" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}\t{sys.argv[3]}%\tyes\t{r['peak_bytes']}\t{r['no_limit_peak_bytes']}\t"
      f"{100*r['recompute_extra_fraction']:.3f}\t{r['recomputed_nodes']}\t{sys.argv[4]}\t{r['recompute_status']}\t"
      f"{r['recompute_peak_bound']}")
EOF
    else
      printf '%s\t%s%%\tno\t-\t-\t-\t-\t%s\t%s\t-\n' "$name" "$pct" "$secs" "$(head -c 200 "$OUT/$name.$pct.err")" >>"$OUT/$name.cli.txt"
    fi
    rm -f "$OUT/$name.$pct.onnx"
  done
  "$B/olla-onnx" tradeoff -q --runtime "$RT" --points 6 "$m" >"$OUT/$name.curve.txt" 2>&1
  cat "$OUT/$name.bench.txt" "$OUT/$name.cli.txt"
done
