#!/usr/bin/env bash
# Runs tests/ort/measure.mjs with the allocation counter preloaded.
#
#   tests/ort/measure.sh [--lib PATH] model.onnx [measure.mjs options ...]
#
# The counter library is --lib PATH, else $OLLA_ALLOC_COUNTER, else
# build/tests/ort/libolla_alloc_counter.so under the source tree (build it with
# cmake --build build). Everything else goes to measure.mjs. V8's compilers
# beyond its interpreter are off (--no-sparkplug, --no-maglev, --no-turbofan):
# they compile the binding's functions once they are hot, on the thread that
# runs the model, and their blocks (4-33 KB at a time) fell into the windows
# of later runs; the JavaScript here does little work.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lib="${OLLA_ALLOC_COUNTER:-$here/../../build/tests/ort/libolla_alloc_counter.so}"
if [ "${1:-}" = "--lib" ]; then
  [ $# -ge 2 ] || { echo "measure.sh: --lib needs the path of libolla_alloc_counter.so" >&2; exit 2; }
  lib="$2"; shift 2
fi
if [ ! -f "$lib" ]; then
  echo "measure.sh: no allocation counter at $lib; build it (cmake -S . -B build && cmake --build build) or give --lib PATH" >&2
  exit 2
fi
lib="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" exec node --expose-gc --no-sparkplug --no-maglev --no-turbofan "$here/measure.mjs" "$@"
