#!/usr/bin/env bash
# Function lengths and parameter counts of the library and cli/ (universal-ctags): the figures of issue 27.
# Usage: bench/house_metrics.sh [CHECKOUT] [--list]
#   prints the number of functions, those over 100 and 150 lines, those over 7 parameters, and with --list each one.
set -euo pipefail
dir=${1:-.}
list=${2:-}
cd "$dir"
files=$(for d in util onnx passes solver plan pipeline cli; do git ls-files "$d" | grep '\.c$'; done)
# shellcheck disable=SC2086
ctags --fields=+neS --c-kinds=f -o - $files | awk -F'\t' -v list="$list" '
{
    line = 0; end = 0; sig = ""
    for (i = 4; i <= NF; i++) {
        if ($i ~ /^line:/) line = substr($i, 6) + 0
        else if ($i ~ /^end:/) end = substr($i, 5) + 0
        else if ($i ~ /^signature:/) sig = substr($i, 11)
    }
    len = end - line + 1
    inner = sig; sub(/^\(/, "", inner); sub(/\)$/, "", inner)
    params = (inner == "" || inner == "void") ? 0 : gsub(/,/, ",", inner) + 1
    n++
    if (len > 100) { over100++; if (list != "") printf "long   %4d lines  %s:%s\n", len, $2, $1 }
    if (len > 150) over150++
    if (params > 7) { many++; if (list != "") printf "params %4d        %s:%s\n", params, $2, $1 }
}
END {
    printf "functions %d\nover_100_lines %d\nover_150_lines %d\nover_7_params %d\n", n, over100, over150, many
}'
