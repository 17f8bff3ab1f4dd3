#!/bin/sh
# Builds bench/place_portfolio.c against a built library and runs it: each
# heuristic of the placement portfolio on its own on every file given (the
# arena in percent above max live, its seconds, the best marked with *).
# usage: bench/place_portfolio.sh BUILD_DIR ALIGN FILE.csv...
#   BUILD_DIR holds libolla.a (e.g. build-bench from bench/place_bench.sh)
set -e
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:?usage: bench/place_portfolio.sh BUILD_DIR ALIGN FILE.csv...}
shift
cc -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I"$SRC" -I"$SRC/include" \
  "$SRC/bench/place_portfolio.c" "$B/libolla_internal.a" $(pkg-config --libs cbc libprotobuf-c json-c) \
  -lpthread -lm -o "$B/place_portfolio"
exec "$B/place_portfolio" "$@"
