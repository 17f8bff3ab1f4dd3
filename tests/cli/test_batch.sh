#!/usr/bin/env bash
# Batch mode: relative paths kept, one JSON line per model, a failing model
# reported and skipped, unchanged inputs not redone, the closing table.
set -u
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
mkdir -p "$tmp/in/sub/deeper"
cp "$SRC/models/mlp_train.onnx" "$tmp/in/"
cp "$SRC/models/cnn_train.onnx" "$tmp/in/sub/"
cp "$SRC/models/external_data.onnx" "$SRC"/models/external_data*.bin "$tmp/in/sub/deeper/"
cp "$SRC/models/bad/cycle.onnx" "$tmp/in/sub/"
echo "not a model" > "$tmp/in/readme.txt"
"$OLLA" batch -j 2 --report "$tmp/r.jsonl" "$tmp/in" "$tmp/out" 2>"$tmp/table"; rc=$?
[ $rc -eq 1 ] && ok || bad "a batch with a failing model should exit 1, got $rc"
for f in mlp_train.onnx sub/cnn_train.onnx sub/deeper/external_data.onnx; do
  [ -f "$tmp/out/$f" ] && "$OLLA" check "$tmp/out/$f" >/dev/null && ok || bad "$f missing or failing its check"
done
[ ! -e "$tmp/out/sub/cycle.onnx" ] && ok || bad "the failing model left an output"
[ "$(wc -l < "$tmp/r.jsonl")" -eq 4 ] && ok || bad "report has $(wc -l < "$tmp/r.jsonl") lines, wanted 4"
[ "$(grep -c '"status":"ok"' "$tmp/r.jsonl")" -eq 3 ] && ok || bad "wanted 3 ok lines: $(cat "$tmp/r.jsonl")"
grep '"status":"failed"' "$tmp/r.jsonl" | grep -q "the graph has a cycle" && ok || bad "the failure's reason is not in the report"
grep -q "4 models: 3 converted, 0 unchanged, 1 failed" "$tmp/table" && ok || bad "closing line: $(tail -1 "$tmp/table")"
grep -qE "^mlp_train.onnx +64 " "$tmp/table" && ok || bad "table row for mlp_train: $(cat "$tmp/table")"
# a second run redoes only what changed
sleep 1; touch "$tmp/in/mlp_train.onnx"
"$OLLA" batch -j 2 --report "$tmp/r2.jsonl" "$tmp/in" "$tmp/out" 2>"$tmp/table2"
grep -q "4 models: 1 converted, 2 unchanged, 1 failed" "$tmp/table2" && ok || bad "rerun: $(tail -1 "$tmp/table2")"
grep '"status":"unchanged"' "$tmp/r2.jsonl" | grep -q "cnn_train" && ok || bad "cnn_train was redone"
# usage
"$OLLA" batch "$tmp/in" 2>/dev/null; [ $? -eq 2 ] && ok || bad "missing OUT_DIR is a usage error"
"$OLLA" batch -j 0 "$tmp/in" "$tmp/out" 2>/dev/null; [ $? -eq 2 ] && ok || bad "-j 0 is a usage error"
"$OLLA" batch "$tmp/nope" "$tmp/out" 2>"$tmp/e"; [ $? -eq 1 ] && grep -q "is not a folder" "$tmp/e" && ok || bad "missing IN_DIR"
echo "batch: $pass passed, $fail failed"
[ $fail -eq 0 ]
