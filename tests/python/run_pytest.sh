#!/usr/bin/env bash
# The Python package's tests (tests/python/test_*.py) with pytest, against
# the package the build assembled in $OLLA_BINARY_DIR/python. In a sanitizer
# build the extension carries ASan, whose runtime must then be loaded first
# (LD_PRELOAD); leak checks are off for the Python process, which keeps its
# objects to the end by design. Skipped (77) when pytest or onnx is missing.
set -u
BIN=${OLLA_BINARY_DIR:?} ; SRC=${OLLA_SOURCE_DIR:?}
PY=/usr/bin/python3
if ! $PY -c 'import pytest, onnx' 2>/dev/null; then
  echo "skip: $PY lacks pytest or onnx (bash scripts/setup.sh --test)"; exit 77
fi
export PYTHONPATH=$BIN/python PYTHONDONTWRITEBYTECODE=1
if grep -q '^OLLA_SANITIZE:BOOL=ON' "$BIN/CMakeCache.txt" 2>/dev/null; then
  LD_PRELOAD=$(gcc -print-file-name=libasan.so)
  export LD_PRELOAD ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi
exec $PY -m pytest -q -p no:cacheprovider "$SRC/tests/python" "$@"
