#!/usr/bin/env bash
# The committed test models are current and as described: regenerating them
# with scripts/make_models.py gives byte-identical files (when the onnx and
# numpy versions are those recorded in models/README.md), and
# scripts/check_models.py confirms every good model passes onnx.checker with
# full value_info and shows its feature, and every bad model has its defect.
# Needs /usr/bin/python3 with onnx and numpy; exits 77 (skipped) without them.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
py=/usr/bin/python3
. "$src/tests/cli/lib.sh"
PY=$py cli_need_python onnx numpy
cli_tmp
work=$tmp

if ! "$py" "$src/scripts/make_models.py" --out "$work/models" >"$work/log" 2>&1; then
  echo "FAILED: make_models.py: $(tail -3 "$work/log")"; exit 1
fi
# The generator must be deterministic: a second run gives the same bytes.
"$py" "$src/scripts/make_models.py" --out "$work/again" >/dev/null 2>&1
diff -r "$work/models" "$work/again" >/dev/null && ok || bad "two runs of make_models.py differ"

versions="$("$py" -c 'import onnx, numpy; print(f"onnx {onnx.__version__}, numpy {numpy.__version__}")')"
if grep -qF "Generated with $versions." "$src/models/README.md"; then
  if diff -r -x README.md "$src/models" "$work/models"; then
    ok "committed models equal a fresh run of make_models.py ($versions)"
  else
    bad "committed models differ from make_models.py output; run scripts/make_models.py and commit"
  fi
else
  cli_missing "$versions differs from the versions in models/README.md; byte comparison not done"
fi

"$py" "$src/scripts/check_models.py" "$src/models" && ok "check_models.py" || bad "check_models.py"
cli_finish "models"
