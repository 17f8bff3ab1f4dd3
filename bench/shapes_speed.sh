#!/usr/bin/env bash
# Speed of shape inference: a synthetic 20,000-node PyTorch-style graph and
# the training corpus (see bench/shapes_speed.c). Prints a Markdown table.
# Usage: bench/shapes_speed.sh [corpus dir]
# Env: BUILD (default build-speed, a Release build of the library).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-$here/../shared/corpus}
build=${BUILD:-$here/build-speed}
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DOLLA_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target olla -j2 >/dev/null
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror \
   -I"$here/include" -I"$here" -I"$build/generated" \
   "$here/bench/shapes_speed.c" "$build/libolla.a" \
   $(pkg-config --libs libprotobuf-c cbc json-c) -lm -o "$build/shapes_speed"
"$build/shapes_speed" "$corpus" 2500
