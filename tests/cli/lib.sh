# tests/cli/lib.sh: what the command-line tests share. A test sources it
# after `set -u` and its own variables:
#
#   . "$(dirname "$0")/lib.sh"
#   cli_tmp                   # $tmp: a fresh folder, removed on exit
#   cli_on_exit 'cmd'         # also run cmd on exit (before $tmp goes)
#   cond && ok || bad "what went wrong"
#   cli_skip "why"            # exit 77: ctest reports the test skipped
#   cli_missing "why"         # some checks cannot run here: the others run,
#                             # then cli_finish exits 77 if none failed
#   cli_need_python onnx numpy  # cli_skip unless $PY imports them
#   cli_finish NAME [WHY]     # "NAME: P passed, F failed"; exit 1 on a
#                             # failure or when no check ran at all; 77
#                             # when WHY (some checks could not run) given
#
# ok counts a check passed (with words, it prints them as "ok: ..."); bad
# counts a failure and prints "FAIL: ...". A test never passes silently:
# a missing tool or data set is a skip (77) with the reason, never a check
# quietly left out, and cli_finish fails a run that checked nothing.

pass=0
fail=0
cli_exit_cmds=""

ok() {
    pass=$((pass + 1))
    [ $# -eq 0 ] || echo "ok: $*"
}

bad() {
    echo "FAIL: $*"
    fail=$((fail + 1))
}

cli_skip() {
    echo "skip: $*"
    exit 77
}

# Some checks cannot run here (a tool or data set is missing): says so now,
# and cli_finish then reports the test skipped (77) if nothing failed.
cli_missing_why=""
cli_missing() {
    echo "not run: $*"
    cli_missing_why="${cli_missing_why:+$cli_missing_why; }$*"
}

# Commands to run on exit, in the order given, then $tmp removed.
cli_on_exit() {
    cli_exit_cmds="$cli_exit_cmds$1;"
}

cli_cleanup() {
    eval "$cli_exit_cmds"
    [ -z "${tmp:-}" ] || rm -rf "$tmp"
}

# $tmp: a fresh folder (under $1 when given), removed on exit.
cli_tmp() {
    if [ $# -gt 0 ]; then tmp=$(mktemp -d "$1/olla-test.XXXXXX"); else tmp=$(mktemp -d); fi
    trap cli_cleanup EXIT
}

# Skips (77) unless ${PY:-/usr/bin/python3} imports every module named.
cli_need_python() {
    local py=${PY:-/usr/bin/python3} m
    command -v "$py" >/dev/null || cli_skip "$py not found (scripts/setup.sh --test)"
    for m in "$@"; do
        "$py" -c "import $m" 2>/dev/null || cli_skip "$py cannot import $m (scripts/setup.sh --test)"
    done
}

# The closing line and the exit status: 1 on a failure or when no check
# ran; else, when some checks could not run (cli_missing, or a second
# argument saying why, e.g. the shared corpus is missing), 77; else 0.
cli_finish() {
    echo "$1: $pass passed, $fail failed"
    if [ $((pass + fail)) -eq 0 ]; then
        echo "FAIL: $1 ran no check"
        exit 1
    fi
    [ "$fail" -eq 0 ] || exit 1
    [ $# -lt 2 ] || cli_missing "$2"
    [ -z "$cli_missing_why" ] || cli_skip "$cli_missing_why"
    exit 0
}
