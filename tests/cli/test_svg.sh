#!/usr/bin/env bash
# --svg draws the plan; rendered by headless Chromium to a PNG that is not blank.
set -u
OLLA=${OLLA:?} ; export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-5} ; SRC=${OLLA_SOURCE_DIR:?}
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
# readable at 5,000 tensors: a bounded number of labels, hover titles, a non-blank rendering
/usr/bin/python3 "$SRC/tests/tools/make_chain_model.py" 5000 "$tmp/chain.onnx" || bad "cannot make the 5,000-node model"
"$OLLA" -q --time-limit 5 --report "$tmp/big.json" --svg "$tmp/big.svg" "$tmp/chain.onnx" "$tmp/chain.out.onnx" ||
  bad "--svg on 5,000 nodes failed"
# one box per buffer: tensors that share a buffer (in-place Relu here) lie in their owner's box
buffers=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["planned_tensors"]-r["views"]-r["inplace"])' "$tmp/big.json")
[ "$buffers" -gt 500 ] && [ "$(grep -c '<title>' "$tmp/big.svg")" -ge "$buffers" ] && ok ||
  bad "fewer hover titles than the $buffers buffers"
[ "$(grep -c '<text x=.*font-size="10"' "$tmp/big.svg")" -le 12 ] && ok || bad "too many labels for a readable picture"
[ "$(stat -c %s "$tmp/big.svg")" -lt 3000000 ] && ok || bad "the 5,000-tensor SVG is over 3 MB"
"$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$tmp/profile2" --hide-scrollbars \
  --window-size=1200,1000 --screenshot="$tmp/big.png" "file://$tmp/big.svg" >/dev/null 2>&1
ink=$(/usr/bin/python3 "$SRC/tests/tools/png_ink.py" "$tmp/big.png" 2>&1)
awk -v i="$ink" 'BEGIN { exit !(i > 0.05) }' && ok || bad "the 5,000-tensor rendering is blank (ink $ink)"
echo "svg: $pass passed, $fail failed"
[ $fail -eq 0 ]
