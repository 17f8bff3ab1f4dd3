#!/usr/bin/env bash
# Running needs less than testing: scripts/setup.sh installs what building
# and running need, scripts/setup.sh --test adds the test tools; the README's
# two commands are exact (the first needs no test tool and builds no tests,
# the second installs what the suite needs); .ci/run runs the test setup and
# then exactly the README's test command; a plain configure builds no tests.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
cli_tmp
run=$(bash "$SRC/scripts/setup.sh" --list | tr '\n' ' ')
all=$(bash "$SRC/scripts/setup.sh" --test --list | tr '\n' ' ')
for p in cmake gcc pkg-config protobuf-c-compiler libprotobuf-c-dev coinor-libcbc-dev libonnx-dev libjson-c-dev; do
  [[ " $run " == *" $p "* ]] && ok || bad "setup.sh does not install $p, which building needs"
done
for p in chromium valgrind clang nodejs npm python3-onnx python3-numpy python3-torch python3-pytest python3-dev python3-venv \
         python3-pip python3-setuptools python3-wheel slurm-wlm munge; do
  [[ " $run " != *" $p "* ]] && ok || bad "setup.sh installs the test tool $p for a user who only runs the tool"
  [[ " $all " == *" $p "* ]] && ok || bad "setup.sh --test does not install $p"
done
# what pip install . needs to build the Python package offline, without the test tools
py=$(bash "$SRC/scripts/setup.sh" --python --list | tr '\n' ' ')
for p in python3-dev python3-pip python3-setuptools python3-wheel python3-venv python3-onnx; do
  [[ " $py " == *" $p "* ]] && ok || bad "setup.sh --python does not install $p"
done
for p in chromium valgrind slurm-wlm python3-pytest; do
  [[ " $py " != *" $p "* ]] && ok || bad "setup.sh --python installs the test tool $p"
done
bash "$SRC/scripts/setup.sh" --bogus 2>/dev/null; [ $? -eq 2 ] && ok || bad "setup.sh takes unknown options"
# the README's two commands: the fenced blocks after "## Two commands"
first=$(awk '/^## Two commands/{s=1} s&&/^```sh/{getline; print; exit}' "$SRC/README.md")
second=$(awk '/^## Two commands/{s=1} s&&/^```sh/{n++; if(n==2){getline; print; exit}}' "$SRC/README.md")
[[ "$first" == "bash scripts/setup.sh && cmake -S . -B build && cmake --build build -j2 && ./build/olla-onnx "* ]] &&
  [[ "$first" != *--test* ]] && [[ "$first" != *OLLA_BUILD_TESTS* ]] && ok || bad "first command: $first"
[ "$second" = "bash scripts/test.sh" ] && ok || bad "second command: $second"
# the run part of the first command works on the bundled model
cmd=${first##*&& ./build/olla-onnx }
(cd "$tmp" && cp -r "$SRC/models" . && "$OLLA" $cmd 2>/dev/null) && [ -s "$tmp/mlp_train.planned.onnx" ] && ok ||
  bad "the first command's run ($cmd) fails"
# the test command installs what it needs and builds the tests
grep -q '^bash scripts/setup.sh --test$' "$SRC/scripts/test.sh" && ok || bad "scripts/test.sh does not run setup.sh --test"
configures=$(grep -c '^cmake -S ' "$SRC/scripts/test.sh")
[ "$configures" -ge 2 ] && [ "$(grep '^cmake -S ' "$SRC/scripts/test.sh" | grep -c -- '-DOLLA_BUILD_TESTS=ON')" -eq "$configures" ] &&
  ok || bad "scripts/test.sh configures without -DOLLA_BUILD_TESTS=ON"
# CI: the test setup, then exactly the README's test command, last
last=$(grep -v '^\s*$' "$SRC/.ci/run" | tail -1)
[ "$last" = "$second" ] && grep -q '^bash scripts/setup.sh --test$' "$SRC/.ci/run" && ok || bad ".ci/run ends with '$last'"
# a plain configure builds no tests
if cmake -S "$SRC" -B "$tmp/b" >/dev/null 2>&1; then
  grep -q '^OLLA_BUILD_TESTS:BOOL=OFF' "$tmp/b/CMakeCache.txt" && [ ! -e "$tmp/b/tests" ] && ok ||
    bad "a plain configure builds the tests"
else
  bad "plain configure failed"
fi
cli_finish "setup"
