#!/usr/bin/env bash
# What a refactoring must not change: converts every model of models/ and of
# the corpus (train/, ort-training/) with -v and --report, and prints one
# line per model with the written model's SHA-256, the report's sizes,
# statuses and placement work units, and the SHA-256 of the -v output with
# its seconds taken out (the searches' lines carry their peaks, bounds and
# work units). Two builds give equal lines when they make the same plans the
# same way.
#
#   bench/plan_snapshot.sh [BUILD_DIR] [TIME_LIMIT] [KEEP_DIR] > snapshot.txt   (defaults: build, 60)
#
# KEEP_DIR, when given, receives each model's -v output (seconds taken out)
# for a diff.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
limit=${2:-60}
keep=${3:-}
corpus=$here/../shared/corpus
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-36s %-16s %12s %12s %12s %14s %-10s %-6s %-9s %-6s %s\n' model onnx_sha256 arena peak lower_bound \
  placement_work sched stop place stop v_output_sha256
for m in "$here"/models/*.onnx "$corpus"/train/*.onnx "$corpus"/ort-training/*.onnx; do
  [ -f "$m" ] || continue
  name=$(basename "$(dirname "$m")")/$(basename "$m" .onnx)
  # shellcheck disable=SC2046
  dims=$(/usr/bin/python3 "$here/tests/tools/dim_names.py" "$m" batch=8 batch_size=8)
  rm -f "$out/m.onnx" "$out/r.json"
  # shellcheck disable=SC2086
  if ! "$build/olla-onnx" -v --time-limit "$limit" $dims --report "$out/r.json" "$m" "$out/m.onnx" \
        2>"$out/err" >"$out/outp"; then
    printf '%-36s failed: %s\n' "$name" "$(head -1 "$out/err")"
    continue
  fi
  # seconds out, and the checkout's own path (the -v lines name the model's file)
  cat "$out/err" "$out/outp" | sed -E -e 's/[0-9]+\.[0-9]+ ?s\b/T s/g' -e "s#$here/#./#g" > "$out/v"
  vsum=$(sha256sum < "$out/v" | cut -c1-16)
  if [ -n "$keep" ]; then mkdir -p "$keep"; cp "$out/v" "$keep/${name//\//_}.txt"; fi
  osum=$(sha256sum "$out/m.onnx" | cut -c1-16)
  /usr/bin/python3 - "$out/r.json" "$name" "$osum" "$vsum" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<36} {sys.argv[3]:<16} {r['arena_bytes']:>12} {r['peak_bytes']:>12} {r['lower_bound_bytes']:>12} "
      f"{r['placement_work']:>14} {r['schedule_status']:<10} {r['schedule_stopped_by']:<6} "
      f"{r['placement_status']:<9} {r['placement_stopped_by']:<6} {sys.argv[4]}")
PY
done
