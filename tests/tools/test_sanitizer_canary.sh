#!/usr/bin/env bash
# The sanitizer suite fails when a forked solver child reports undefined
# behaviour: the canary's child makes a misaligned store; the parent ends
# with the child's report code, and the suite's runner fails the test, also
# when the test discards $OLLA's stderr and exit code.
#   test_sanitizer_canary.sh CANARY_BINARY
set -u
canary=${1:?usage: $0 CANARY_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# the child reports the misaligned store
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1 "$canary" >"$work/alone.out" 2>"$work/alone.err"
grep -q 'misaligned address' "$work/alone.err" || fail "the child printed no misaligned-store report: $(cat "$work/alone.err")"

# a unit test whose solver child reports fails under the runner and says why
"$here/sanitizer_run.sh" "$work/reports" "$canary" >"$work/run.out" 2>&1
code=$?
[ $code -eq 1 ] || fail "the runner exited $code, not 1: $(cat "$work/run.out")"
grep -q 'sanitizer report' "$work/run.out" || fail "the runner did not say why: $(cat "$work/run.out")"

# a command-line test that hides the exit code of $OLLA still fails
cat >"$work/hides.sh" <<'SH'
"$OLLA" || true
exit 0
SH
OLLA="$canary" "$here/sanitizer_run.sh" "$work/reports2" bash "$work/hides.sh" >"$work/run2.out" 2>&1
code=$?
[ $code -eq 1 ] || fail "a test ignoring \$OLLA's exit code passed the runner ($code): $(cat "$work/run2.out")"
grep -q "$canary" "$work/run2.out" || fail "the runner did not name the command: $(cat "$work/run2.out")"

# and a clean command passes through the runner with its own exit code
"$here/sanitizer_run.sh" "$work/clean" true || fail "a clean command failed under the runner"
"$here/sanitizer_run.sh" "$work/skip" bash -c 'exit 77'
[ $? -eq 77 ] || fail "the runner did not pass exit code 77 through"
echo "PASS: a child's sanitizer report fails the test; clean runs keep their exit code"
