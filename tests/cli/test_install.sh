#!/usr/bin/env bash
# cmake --install puts the command, the library, the runtime header and the
# man page in place, and a runtime can compile against the installed header.
set -u
BIN=${OLLA_BINARY_DIR:?}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
cmake --install "$BIN" --prefix "$tmp/p" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
for f in bin/olla-onnx share/man/man1/olla-onnx.1 include/olla_plan.h include/olla_error.h; do
  [ -f "$tmp/p/$f" ] && pass=$((pass+1)) || { echo "FAIL: $f not installed"; fail=$((fail+1)); }
done
lib=$(find "$tmp/p" -name libolla.a | head -1)
[ -n "$lib" ] && pass=$((pass+1)) || { echo "FAIL: libolla.a not installed"; fail=$((fail+1)); }
grep -q '^\.TH OLLA-ONNX 1' "$tmp/p/share/man/man1/olla-onnx.1" && pass=$((pass+1)) || { echo "FAIL: man page header"; fail=$((fail+1)); }
printf '#include <olla_plan.h>\nint main(void){ olla_runtime_plan *p = 0; olla_error e = {0}; return olla_runtime_plan_parse("{}", &p, &e) == OLLA_OK; }\n' > "$tmp/use.c"
cc -std=c11 -c -I"$tmp/p/include" "$tmp/use.c" -o "$tmp/use.o" && pass=$((pass+1)) || { echo "FAIL: olla_plan.h does not compile on its own"; fail=$((fail+1)); }
"$tmp/p/bin/olla-onnx" --version >/dev/null && pass=$((pass+1)) || { echo "FAIL: installed binary"; fail=$((fail+1)); }
echo "install: $pass passed, $fail failed"
[ $fail -eq 0 ]
