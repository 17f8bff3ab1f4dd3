#!/usr/bin/env bash
# --svg draws the plan; rendered by headless Chromium to a PNG that is not blank.
set -u
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
"$OLLA" -q --svg "$tmp/plan.svg" "$SRC/models/cnn_train.onnx" "$tmp/out.onnx" || bad "--svg run failed"
[ -f "$tmp/out.onnx" ] && ok || bad "no model written alongside the SVG"
grep -q "<svg" "$tmp/plan.svg" && grep -q "Arena layout" "$tmp/plan.svg" && ok || bad "not an SVG with both panels"
# one box with a hover title per planned tensor
"$OLLA" -q --report "$tmp/r.json" "$SRC/models/cnn_train.onnx" "$tmp/o2.onnx"
planned=$(grep -oE '"planned_tensors": *[0-9]+' "$tmp/r.json" | grep -oE '[0-9]+$')
boxes=$(grep -c "<rect x=.*<title>" "$tmp/plan.svg")
[ "$boxes" -gt 0 ] && [ "$boxes" -le "$planned" ] && ok || bad "boxes $boxes for $planned planned tensors"
"$OLLA" -q --svg "$tmp/no/such/dir.svg" "$SRC/models/cnn_train.onnx" "$tmp/o3.onnx" 2>"$tmp/e"; [ $? -eq 3 ] && ok || bad "unwritable SVG path"
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  echo "chromium missing (scripts/setup.sh installs it)"; exit 1
fi
"$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$tmp/profile" --hide-scrollbars \
  --window-size=1200,1000 --screenshot="$tmp/plan.png" "file://$tmp/plan.svg" >/dev/null 2>&1
[ -s "$tmp/plan.png" ] && ok || bad "Chromium wrote no PNG"
ink=$(/usr/bin/python3 "$SRC/tests/tools/png_ink.py" "$tmp/plan.png" 2>&1)
awk -v i="$ink" 'BEGIN { exit !(i > 0.05) }' && ok || bad "the rendered plan is blank (ink $ink)"
echo "svg: $pass passed, $fail failed"
[ $fail -eq 0 ]
