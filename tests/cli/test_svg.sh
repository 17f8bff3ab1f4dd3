#!/usr/bin/env bash
# --svg draws the plan. Without a browser: one box per planned tensor, a
# bounded number of labels at 5,000 tensors, an unwritable path refused
# before any work. In headless Chromium: the picture is not blank, every
# level line (input-order peak, planned peak, lower bound, arena) sits where
# its axis puts the report's number, and no two labels overlap
# (tests/tools/svg_geometry.py). Skipped (77) when Chromium is absent
# (scripts/setup.sh --test installs it) and everything else passed.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-5} ; SRC=${OLLA_SOURCE_DIR:?}
PY=/usr/bin/python3
cli_tmp
"$OLLA" -q --svg "$tmp/plan.svg" --report "$tmp/r.json" "$SRC/models/cnn_train.onnx" "$tmp/out.onnx" || bad "--svg run failed"
[ -f "$tmp/out.onnx" ] && ok || bad "no model written alongside the SVG"
grep -q "<svg" "$tmp/plan.svg" && grep -q "Arena layout" "$tmp/plan.svg" && ok || bad "not an SVG with both panels"
# one box with a hover title per planned tensor
planned=$(grep -oE '"planned_tensors": *[0-9]+' "$tmp/r.json" | grep -oE '[0-9]+$')
boxes=$(grep -c "<rect x=.*<title>" "$tmp/plan.svg")
[ "$boxes" -gt 0 ] && [ "$boxes" -le "$planned" ] && ok || bad "boxes $boxes for $planned planned tensors"
# axes carry values with units
grep -qE '<text [^>]*text-anchor="end">[0-9.]+ (B|KiB|MiB)</text>' "$tmp/plan.svg" && ok || bad "no byte values on the y axes"
# an unwritable path is a usage error found before any work, and nothing is written
"$OLLA" -q --svg "$tmp/no/such/dir.svg" "$SRC/models/cnn_train.onnx" "$tmp/o3.onnx" 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && [ ! -e "$tmp/o3.onnx" ] && grep -q -- "--svg $tmp/no/such/dir.svg: the folder" "$tmp/e" && ok ||
  bad "unwritable SVG path: rc=$rc $(cat "$tmp/e")"
# readable at 5,000 tensors: a bounded number of labels, hover titles, a small file
$PY "$SRC/tests/tools/make_chain_model.py" 5000 "$tmp/chain.onnx" || bad "cannot make the 5,000-node model"
"$OLLA" -q --time-limit 5 --svg "$tmp/big.svg" --report "$tmp/big.json" "$tmp/chain.onnx" "$tmp/chain.out.onnx" ||
  bad "--svg on 5,000 nodes failed"
# one box per buffer: tensors that share a buffer (in-place Relu here) lie in their owner's box
buffers=$($PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["planned_tensors"]-r["views"]-r["inplace"])' "$tmp/big.json")
[ "$buffers" -gt 500 ] && [ "$(grep -c '<title>' "$tmp/big.svg")" -ge "$buffers" ] && ok ||
  bad "fewer hover titles than the $buffers buffers"
names=$(sed -n '/<g class="names"/,/<\/g>/p' "$tmp/big.svg" | grep -c '<text')
[ "$names" -le 12 ] && ok || bad "$names tensor names: too many for a readable picture"
[ "$(stat -c %s "$tmp/big.svg")" -lt 3000000 ] && ok || bad "the 5,000-tensor SVG is over 3 MB"

chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  cli_finish "svg" "chromium not found; the rendering checks need it (bash scripts/setup.sh --test installs it)"
fi
browse() { # browse PROFILE ARGS...: headless Chromium with the flags this machine needs
  local profile=$1; shift
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/$profile" --hide-scrollbars "$@" 2>/dev/null
}
for m in plan big; do
  json=$tmp/r.json; [ $m = big ] && json=$tmp/big.json
  browse "p-$m" --window-size=1200,1000 --screenshot="$tmp/$m.png" "file://$tmp/$m.svg" >/dev/null
  ink=$($PY "$SRC/tests/tools/png_ink.py" "$tmp/$m.png" 2>&1)
  awk -v i="$ink" 'BEGIN { exit !(i > 0.05) }' && ok || bad "$m: the rendered plan is blank (ink $ink)"
  $PY "$SRC/tests/tools/svg_geometry.py" page "$tmp/$m.svg" "$tmp/$m.html"
  browse "g-$m" --dump-dom "file://$tmp/$m.html" >"$tmp/$m.dom"
  if $PY "$SRC/tests/tools/svg_geometry.py" check "$tmp/$m.dom" "$json" >"$tmp/$m.geo"; then ok; else
    bad "$m: $(cat "$tmp/$m.geo")"; fi
done
# the lower bound is in the picture where it is in the report (not a drawn-off copy)
grep -q '"lower_bound_bytes": *[0-9]' "$tmp/r.json" && grep -q 'class="level lower-bound"' "$tmp/plan.svg" && ok ||
  bad "cnn_train has a lower bound in its report but no lower-bound line"
cli_finish "svg"
