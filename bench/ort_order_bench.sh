#!/bin/sh
# What ONNX Runtime runs, before and after choosing the listing for it:
# builds bench/ort_order_bench.c against a built library and runs it on the
# training graphs of the corpus (train/ at both batch sizes, ort-training/ with
# batch_size bound to 1 and 32), printing a markdown table (peaks in MB =
# 10^6 bytes, alignment 1).
# usage: bench/ort_order_bench.sh [build-dir] [corpus-dir] [budget]
set -e
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build}
CORPUS=${2:-$SRC/../shared/corpus}
BUDGET=${3:-4000}
cc -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I"$SRC" -I"$SRC/include" -I"$B/generated" \
  "$SRC/bench/ort_order_bench.c" "$B/libolla.a" $(pkg-config --libs cbc libprotobuf-c json-c) -lm \
  -o "$B/ort_order_bench"
runs() {
  for f in "$CORPUS"/train/*.onnx; do echo "$f"; done
  for f in "$CORPUS"/ort-training/*.onnx; do echo "$f batch_size=1"; echo "$f batch_size=32"; done
}
echo "| graph | nodes | listed input | ORT runs input | planned (bound) | ORT runs planned as written | ORT runs our listing | above plan | target runs | evaluations | stopped by | search s | order s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"
runs | while read -r f dim; do
  name=$(basename "$(dirname "$f")")/$(basename "$f" .onnx)
  [ -n "$dim" ] && name="$name ($dim)"
  "$B/ort_order_bench" --budget "$BUDGET" ${dim:+--dim "$dim"} "$f" |
    awk -F'\t' -v name="$name" '{
      mb = 1e6
      above = ($6 > 0) ? sprintf("%.3f%%", 100 * ($10 - $6) / $6) : "0"
      printf "| %s | %d | %.6f | %.6f | %.6f (%.6f) | %.6f | %.6f | %s | %s | %d | %s | %.3f | %.3f |%s\n",
        name, $2, $4 / mb, $5 / mb, $6 / mb, $7 / mb, $9 / mb, $10 / mb, above, ($11 ? "yes" : "no"), $12, $13, $14, $15,
        (NF > 15 ? " " $16 : "")
    }'
done
