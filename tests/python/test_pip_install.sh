#!/usr/bin/env bash
# pip installs the package offline, as the README says: a copy of the
# sources (the files git knows), a venv made with --system-site-packages
# from /usr/bin/python3, `pip install --no-build-isolation --no-index .`;
# the installed olla_onnx then plans a bundled model from another folder,
# with the bytes the command line writes. Skipped (77) when venv, pip,
# setuptools, wheel, the Python headers or onnx are missing.
set -u
SRC=${OLLA_SOURCE_DIR:?} ; OLLA=${OLLA:?}
PY=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if ! $PY -c 'import setuptools, venv, pip, wheel, onnx, sysconfig, os; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
  echo "skip: $PY lacks venv, pip, setuptools, wheel, onnx or its headers (bash scripts/setup.sh --test)"; exit 77
fi
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
mkdir "$tmp/src"
# the files git knows, or (not a git checkout) everything but the build folders
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$SRC" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf -) | tar -xf - -C "$tmp/src"
else
  tar -C "$SRC" --exclude='./build*' --exclude='./node_modules' -cf - . | tar -xf - -C "$tmp/src"
fi
[ -f "$tmp/src/setup.py" ] || { echo "FAIL: cannot copy the sources"; exit 1; }
$PY -m venv --system-site-packages "$tmp/venv" || { echo "FAIL: venv"; exit 1; }
# the sanitizer build's runtime settings are for its own binaries, not for this build
(cd "$tmp/src" && env -u LD_PRELOAD -u ASAN_OPTIONS -u UBSAN_OPTIONS \
  "$tmp/venv/bin/pip" install -q --no-build-isolation --no-index . >"$tmp/pip.log" 2>&1) && ok ||
  { bad "pip install: $(tail -20 "$tmp/pip.log")"; echo "pip: $pass passed, $fail failed"; exit 1; }
# installed into the venv, importable from anywhere, and the same bytes as the command line
mkdir "$tmp/elsewhere"
"$OLLA" -q --time-limit 20 "$SRC/models/mlp_train.onnx" "$tmp/cli.onnx" 2>/dev/null
(cd "$tmp/elsewhere" && env -u PYTHONPATH -u LD_PRELOAD "$tmp/venv/bin/python" - "$SRC/models/mlp_train.onnx" "$tmp/py.onnx" <<'PY'
import sys, olla_onnx
assert olla_onnx.__file__.startswith(sys.prefix), olla_onnx.__file__
planned, report = olla_onnx.optimize(sys.argv[1], time_limit=20)
open(sys.argv[2], "wb").write(planned.SerializeToString())
print(olla_onnx.__version__, report["arena_bytes"])
PY
) >"$tmp/run.log" 2>&1 && ok || bad "the installed package: $(cat "$tmp/run.log")"
cmp -s "$tmp/cli.onnx" "$tmp/py.onnx" && ok || bad "the installed package's bytes differ from the command line's"
want=$(sed -n 's/^project(olla-onnx VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
grep -q "^$want " "$tmp/run.log" && ok || bad "version: $(cat "$tmp/run.log"), wanted $want"
"$tmp/venv/bin/pip" show olla-onnx 2>/dev/null | grep -q "^Version: $want" && ok || bad "pip show olla-onnx"
echo "pip: $pass passed, $fail failed"
[ $fail -eq 0 ]
