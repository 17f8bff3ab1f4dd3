#!/bin/sh
# Builds bench/sched_bench against a built library.
# usage: bench/build_sched_bench.sh [build-dir]   (default: build-release)
set -e
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build-release}
cc -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I"$SRC" -I"$SRC/include" -I"$B/generated" \
  "$SRC/bench/sched_bench.c" "$B/libolla_internal.a" $(pkg-config --libs cbc libprotobuf-c json-c) -lm -o "$B/sched_bench"
echo "$B/sched_bench"
