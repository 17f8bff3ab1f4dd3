#!/usr/bin/env bash
# --joint against the two-step plan on small models: arena and total seconds
# of each, from the --report JSON. Usage: bench/joint_bench.sh OLLA MODEL...
# (time limit from $TL, default 30 s).
set -u
OLLA=${1:?usage: joint_bench.sh OLLA MODEL...}; shift
TL=${TL:-30}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
get() { /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r[sys.argv[2]])' "$1" "$2"; }
echo "| model | nodes | two-step arena | s | --joint arena | s | joint used | joint line |"
echo "|---|---|---|---|---|---|---|---|"
for m in "$@"; do
  name=$(basename "$(dirname "$m")")/$(basename "$m")
  if ! "$OLLA" -q --time-limit "$TL" --report "$tmp/a.json" "$m" "$tmp/a.onnx" 2>/dev/null; then
    echo "| $name | | failed | | | | | |"; continue
  fi
  "$OLLA" -v --joint --time-limit "$TL" --report "$tmp/b.json" "$m" "$tmp/b.onnx" 2>"$tmp/e" || { echo "| $name | | | | failed | | | |"; continue; }
  "$OLLA" check "$tmp/b.onnx" >/dev/null 2>&1 || echo "CHECK FAILED: $name" >&2
  line=$(grep -o "joint ILP.*" "$tmp/e" | head -1)
  echo "| $name | $(get "$tmp/a.json" nodes) | $(get "$tmp/a.json" arena_bytes) | $(printf %.2f "$(get "$tmp/a.json" total_seconds)") | $(get "$tmp/b.json" arena_bytes) | $(printf %.2f "$(get "$tmp/b.json" total_seconds)") | $(get "$tmp/b.json" joint_used) | $line |"
done
