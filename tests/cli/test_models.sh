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
if ! "$py" -c 'import onnx, numpy' 2>/dev/null; then
  echo "skipped: $py cannot import onnx and numpy"; exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0

if ! "$py" "$src/scripts/make_models.py" --out "$work/models" >"$work/log" 2>&1; then
  echo "FAILED: make_models.py: $(tail -3 "$work/log")"; exit 1
fi
# The generator must be deterministic: a second run gives the same bytes.
"$py" "$src/scripts/make_models.py" --out "$work/again" >/dev/null 2>&1
if ! diff -r "$work/models" "$work/again" >/dev/null; then
  echo "FAILED: two runs of make_models.py differ"; failures=$((failures + 1))
fi

versions="$("$py" -c 'import onnx, numpy; print(f"onnx {onnx.__version__}, numpy {numpy.__version__}")')"
if grep -qF "Generated with $versions." "$src/models/README.md"; then
  if diff -r -x README.md "$src/models" "$work/models"; then
    echo "ok: committed models equal a fresh run of make_models.py ($versions)"
  else
    echo "FAILED: committed models differ from make_models.py output; run scripts/make_models.py and commit"
    failures=$((failures + 1))
  fi
else
  echo "note: $versions differs from the versions in models/README.md; byte comparison not done"
fi

if "$py" "$src/scripts/check_models.py" "$src/models"; then
  echo "ok: check_models.py"
else
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "models ok"
