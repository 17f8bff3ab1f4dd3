#!/usr/bin/env bash
# Runs a fast subset of the command-line tests with every olla-onnx process
# under valgrind memcheck: any invalid access, use of uninitialised memory
# or leak fails the run (exit 99 from valgrind). The subset: the error and
# limit tests, the hostile-input test with fewer bit flips, and conversions
# of the bundled models with small time limits.
#
#   scripts/memcheck.sh [path/to/olla-onnx]     (default build/olla-onnx)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/olla-onnx}")
[ -x "$bin" ] || { echo "memcheck: no binary at $bin (build first)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "memcheck: valgrind is missing (scripts/setup.sh --test installs it)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The wrapper stands for the binary in the tests. Forked solver children
# exit without cleaning up on purpose; their output is silenced.
cat >"$tmp/olla-onnx" <<SH
#!/bin/sh
exec valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,possible \\
  --child-silent-after-fork=yes -q "$bin" "\$@"
SH
chmod +x "$tmp/olla-onnx"
export OLLA=$tmp/olla-onnx OLLA_SOURCE_DIR=$PWD OLLA_BINARY_DIR=$(dirname "$bin") OLLA_TIME_LIMIT=2
status=0
run() { # name command...
  local t0=$SECONDS
  if "${@:2}" >"$tmp/log" 2>&1; then echo "memcheck: $1 passed ($((SECONDS - t0)) s)"; else
    status=1; echo "memcheck: $1 FAILED"; tail -30 "$tmp/log"; fi
}
run "tests/cli/test_errors.sh" bash tests/cli/test_errors.sh
run "tests/cli/test_limits.sh" bash tests/cli/test_limits.sh
run "tests/cli/test_hostile.sh (16 bit flips)" env OLLA_HOSTILE_FLIPS=16 bash tests/cli/test_hostile.sh
convert() {
  local fail=0
  for m in models/*.onnx; do
    local dims=()
    case $m in *symbolic_dims*) dims=(--dim batch=2) ;; esac
    "$OLLA" -q --time-limit 1 "${dims[@]}" "$m" "$tmp/out.onnx" && "$OLLA" check "${dims[@]}" "$tmp/out.onnx" >/dev/null ||
      { echo "conversion of $m failed"; fail=1; }
    rm -f "$tmp/out.onnx"
  done
  "$OLLA" shapes models/if_loop.onnx >/dev/null || { echo "shapes failed"; fail=1; }
  printf 'id,lower,upper,size\n0,0,3,4\n1,1,4,8\n2,3,6,4\n3,0,6,2\n' >"$tmp/in.csv"
  "$OLLA" place "$tmp/in.csv" "$tmp/out.csv" --time-limit 1 2>/dev/null || { echo "place failed"; fail=1; }
  return $fail
}
run "conversions of models/*.onnx, shapes, place" convert
exit $status
