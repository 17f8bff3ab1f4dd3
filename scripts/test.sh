#!/usr/bin/env bash
# Runs the whole test suite: a normal build and an AddressSanitizer +
# UndefinedBehaviorSanitizer build, each with every ctest test, and a subset
# of the command-line tests under valgrind memcheck (scripts/memcheck.sh);
# and checks that the Release build (-O3) compiles without a warning.
# It first installs what the suite needs (scripts/setup.sh --test: Debian
# packages; scripts/setup_ort.sh: ONNX Runtime for Node.js from npm).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
jobs=$(nproc 2>/dev/null || echo 2)
if [ -x scripts/setup_ort.sh ] || [ -f scripts/setup_ort.sh ]; then
  bash scripts/setup_ort.sh || echo "warning: onnxruntime-node could not be installed; the ORT checks will report it"
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOLLA_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$jobs"
# the optimized build users and the benchmarks make must compile too, tests included
# (-O3 warns about more than -O2, and warnings are errors)
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DOLLA_BUILD_TESTS=ON >/dev/null
cmake --build build-release -j"$jobs"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DOLLA_SANITIZE=ON -DOLLA_BUILD_TESTS=ON >/dev/null
cmake --build build-asan -j"$jobs"
# each sanitizer test runs under tests/tools/sanitizer_run.sh, which sets
# ASAN_OPTIONS and UBSAN_OPTIONS so that any report fails the test
status=0
echo "== sanitizer build (ASan + UBSan) =="
ctest --test-dir build-asan --output-on-failure -j"$jobs" || status=1
echo "== valgrind memcheck (command-line subset) =="
bash scripts/memcheck.sh build/olla-onnx || status=1
# last, so that the suite's closing line is ctest's summary
echo "== release build =="
ctest --test-dir build --output-on-failure -j"$jobs" || status=1
exit $status
