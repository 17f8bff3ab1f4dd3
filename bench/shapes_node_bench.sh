#!/usr/bin/env bash
# Shape inference against ONNX's per-operator test models (see
# bench/shapes_node_bench.c for the matching rule).
# Usage: bench/shapes_node_bench.sh [onnx-node dir] [-v]
# Env: BUILD (default build-bench, a Release build of the library).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-$here/../shared/corpus/onnx-node}
build=${BUILD:-$here/build-bench}
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DOLLA_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target olla -j2 >/dev/null
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror \
   -I"$here/include" -I"$here" -I"$build/generated" \
   "$here/bench/shapes_node_bench.c" "$build/libolla.a" \
   $(pkg-config --libs libprotobuf-c cbc json-c) -lm -o "$build/shapes_node_bench"
if [ "${2:-}" = "-v" ]; then
  "$build/shapes_node_bench" -v "$corpus"
else
  "$build/shapes_node_bench" "$corpus"
fi
