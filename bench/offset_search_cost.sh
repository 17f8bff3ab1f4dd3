#!/bin/sh
# Builds bench/offset_search_cost.c against a built library and runs it on
# every file given: the offset-order search alone at PERMILLE/1000 of max
# live in orders 0-2 (nodes, work units, CPU seconds, a hash of the offsets).
# usage: bench/offset_search_cost.sh BUILD_DIR ALIGN PERMILLE FILE.csv...
#   BUILD_DIR holds libolla.a and libolla_internal.a; EXTRA_CFLAGS is
#   passed to cc (-DOLLA_OFFSET_SEARCH_6ARGS for a1ee9c0 and earlier, with
#   SRC_DIR set to that checkout)
set -e
SRC=${SRC_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
HERE=$(cd "$(dirname "$0")/.." && pwd)
B=${1:?usage: bench/offset_search_cost.sh BUILD_DIR ALIGN PERMILLE FILE.csv...}
A=${2:?align}
P=${3:?permille}
shift 3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# shellcheck disable=SC2086
cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L ${EXTRA_CFLAGS:-} -I"$SRC" -I"$SRC/include" \
  "$HERE/bench/offset_search_cost.c" "$B/libolla_internal.a" "$B/libolla.a" -lpthread -lm -o "$W/cost"
for f in "$@"; do
    for o in 0 1 2; do
        "$W/cost" "$f" "$A" "$P" "$o"
    done
done
