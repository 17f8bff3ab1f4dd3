#!/bin/sh
# Builds bench/remat_bench against a built library.
# usage: bench/build_remat_bench.sh [build-dir]   (default: build-release)
set -e
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build-release}
cc -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I"$SRC" -I"$SRC/include" -I"$B/generated" \
  "$SRC/bench/remat_bench.c" "$B/libolla.a" $(pkg-config --libs cbc libprotobuf-c json-c) -lm -lpthread \
  -o "$B/remat_bench"
echo "$B/remat_bench"
