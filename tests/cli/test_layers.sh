#!/usr/bin/env bash
# The house is one-way: every #include of the library points down the
# pipeline, never up (README, "Layout"). Levels, bottom first:
#   util < onnx < passes/shapes < passes/analysis < passes/runtime < solver < plan < pipeline < cli, examples, python
# A file may include headers of its own level and below. Public headers
# (include/) sit at the level of what they declare: olla_error.h and
# olla_bindings.h with util, olla_plan.h with plan, olla.h with pipeline; a
# public header includes only public headers, so it can be installed.
# Exit 1 listing every include that points up.
set -u
src="${OLLA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
cd "$src" || exit 2

level_of() { # path of a file or an include -> level number, or "" when not ours
  case "$1" in
    util/*) echo 0 ;;
    olla_error.h | include/olla_error.h | olla_bindings.h | include/olla_bindings.h) echo 0 ;;
    onnx.pb-c.h) echo 1 ;;
    onnx/*) echo 1 ;;
    passes/shapes/*) echo 2 ;;
    passes/analysis/*) echo 3 ;;
    passes/runtime/*) echo 4 ;;
    solver/*) echo 5 ;;
    olla_plan.h | include/olla_plan.h | plan/*) echo 6 ;;
    olla.h | include/olla.h | pipeline/*) echo 7 ;;
    cli/* | examples/* | python/*) echo 8 ;;
    *) echo "" ;;
  esac
}

bad=0
checked=0
while IFS= read -r file; do
  from=$(level_of "$file")
  [ -n "$from" ] || continue
  while IFS= read -r inc; do
    to=$(level_of "$inc")
    checked=$((checked + 1))
    if [ -z "$to" ]; then
      echo "unknown project header: $file includes \"$inc\""
      bad=1
    elif [ "$to" -gt "$from" ]; then
      echo "points up: $file (level $from) includes \"$inc\" (level $to)"
      bad=1
    elif [[ "$file" == include/* && "$inc" == */* ]]; then
      echo "public header includes an internal one: $file includes \"$inc\""
      bad=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(git ls-files --cached --others --exclude-standard 'util/*' 'onnx/*' 'passes/*' 'solver/*' 'plan/*' 'pipeline/*' 'include/*' 'cli/*' 'examples/*' 'python/*' | grep '\.[ch]$')

[ "$checked" -gt 100 ] || { echo "FAIL: only $checked includes read; is this the source tree?"; exit 1; }
[ $bad -eq 0 ] || { echo "FAIL: includes that point up the pipeline (see README, Layout)"; exit 1; }
echo "PASS: $checked includes, all pointing down the pipeline"
