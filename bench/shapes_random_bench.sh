#!/usr/bin/env bash
# Compares olla's shape inference with onnx.shape_inference (the installed
# onnx package) on random single-node models of the convolution, pooling,
# recurrent, resize, normalization and signal operators (fixed seed).
# Usage: bench/shapes_random_bench.sh [-m]
# Env: BUILD (default build-bench), PYTHON (default /usr/bin/python3).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$here/build-bench}
py=${PYTHON:-/usr/bin/python3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$py" "$here/bench/shapes_random_models.py" "$dir"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DOLLA_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target olla -j2 >/dev/null
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror \
   -I"$here/include" -I"$here" -I"$build/generated" \
   "$here/bench/shapes_node_bench.c" "$build/libolla.a" \
   $(pkg-config --libs libprotobuf-c cbc json-c) -lm -o "$build/shapes_node_bench"
"$build/shapes_node_bench" ${1:-} "$dir"
