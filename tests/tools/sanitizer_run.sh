#!/usr/bin/env bash
# Runs one test of a sanitizer build so that a sanitizer report from ANY
# process of ours fails it, even where the test discards that process's
# stderr or a forked solver child made the report.
#
#   tests/tools/sanitizer_run.sh REPORT_DIR command [args...]
#
# How: every sanitizer report ends its process with exit code 86 (ASan,
# LSan and UBSan's exitcode), which no program of ours uses otherwise; a
# solver child that ends so makes its parent end so too (solver/cbc_child.c,
# in sanitizer builds). The binaries the command-line tests run ($OLLA,
# $OLLA_ARENA_EXEC) are wrapped: an exit code of 86 leaves a note in
# REPORT_DIR. The test fails when its command exits 86 or any note is there;
# otherwise its own exit code stands (77, skipped, included).
set -u
[ $# -ge 2 ] || { echo "usage: $0 REPORT_DIR command [args...]" >&2; exit 2; }
dir=$1
shift
rm -rf "$dir" && mkdir -p "$dir/bin" || exit 2
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
for var in OLLA OLLA_ARENA_EXEC; do
  real=${!var:-}
  [ -n "$real" ] && [ -x "$real" ] || continue
  wrapper="$dir/bin/$(basename "$real")"
  cat >"$wrapper" <<SH
#!/usr/bin/env bash
"$real" "\$@"
code=\$?
[ \$code -eq 86 ] && printf '%s\n' "$real \$*" >>"$dir/reports"
exit \$code
SH
  chmod +x "$wrapper"
  export "$var=$wrapper"
done
"$@"
code=$?
if [ $code -eq 86 ] || [ -s "$dir/reports" ]; then
  echo "FAILED: a sanitizer report (exit code 86) ended a process of this test (the report is on its stderr)."
  [ -s "$dir/reports" ] && { echo "Commands that ended with a report:"; cat "$dir/reports"; }
  exit 1
fi
exit $code
