#!/bin/sh
# Builds bench/updates_bench against a built library.
# usage: bench/build_updates_bench.sh [build-dir]   (default: build-release)
set -e
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build-release}
cc -std=c11 -O2 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I"$SRC" -I"$SRC/include" -I"$B/generated" \
  "$SRC/bench/updates_bench.c" "$B/libolla_internal.a" $(pkg-config --libs cbc libprotobuf-c json-c) -lm -lpthread \
  -o "$B/updates_bench"
echo "$B/updates_bench"
