#!/usr/bin/env bash
# Shape inference against ONNX's per-operator test models (matching rule in
# bench/shapes_node_bench.c), then the timing of a 20,000-node chain.
# Usage: bench/shapes_node_bench.sh [-v|-m] [onnx-node dir]
#   -v also lists the matches, -m prints the mismatches as Markdown rows.
# Env: BUILD (default build-bench: a Release build of the library).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
flag=
case "${1:-}" in -v|-m) flag=$1; shift ;; esac
corpus=${1:-$here/../shared/corpus/onnx-node}
build=${BUILD:-$here/build-bench}
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DOLLA_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target olla -j2 >/dev/null
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror \
   -I"$here/include" -I"$here" -I"$build/generated" \
   "$here/bench/shapes_node_bench.c" "$build/libolla.a" \
   $(pkg-config --libs libprotobuf-c cbc json-c) -lm -o "$build/shapes_node_bench"
"$build/shapes_node_bench" $flag "$corpus"
"$build/shapes_node_bench" -c 20000
