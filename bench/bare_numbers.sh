#!/usr/bin/env bash
# Numeric literals other than 0, 1 and 2 in the C files of solver/, outside comments, strings, #define lines and enum bodies.
# Usage: bench/bare_numbers.sh [CHECKOUT]
cd "${1:-.}"
for f in $(git ls-files solver | grep '\.c$'); do
  gcc -fpreprocessed -dD -E -P "$f" 2>/dev/null | awk '
    /^[ \t]*#/ {next}
    /^[ \t]*(typedef )?enum([^A-Za-z0-9_]|$)/ {inenum=1}
    inenum { if ($0 ~ /}/) inenum=0; next }
    { gsub(/"([^"\\]|\\.)*"/, ""); gsub(/\x27([^\x27\\]|\\.)*\x27/, "");
      while (match($0, /(^|[^A-Za-z0-9_.])[0-9][0-9A-Fa-fxX.eE]*[uUlLfF]*/)) {
        tok = substr($0, RSTART, RLENGTH); sub(/^[^0-9]/, "", tok); sub(/[uUlLfF]+$/, "", tok);
        if (tok != "0" && tok != "1" && tok != "2" && tok != "0.0" && tok != "1.0") n++;
        $0 = substr($0, RSTART + RLENGTH) } }
    END { print n + 0 }'
done | awk '{s += $1} END {print s}'
