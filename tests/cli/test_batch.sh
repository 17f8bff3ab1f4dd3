#!/usr/bin/env bash
# Batch mode: relative paths kept, one JSON line per model, a failing model
# reported (with its reason on the terminal) and skipped, the closing table;
# "unchanged" keyed on the model and the options, --force, an output tree
# inside the input tree skipped, the progress line on a terminal, the
# default -j, and Ctrl-C: one message, finished records kept, no partial file.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-5} ; SRC=${OLLA_SOURCE_DIR:?}
cli_tmp
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
grep -q "olla-onnx batch: sub/cycle.onnx: .*the graph has a cycle" "$tmp/table" && ok || bad "the failure's reason is not on the terminal: $(cat "$tmp/table")"
# a changed option redoes every model; the same options again leave them unchanged
"$OLLA" batch -j 2 --align 128 "$tmp/in" "$tmp/out" 2>"$tmp/t3"
grep -q "4 models: 3 converted, 0 unchanged, 1 failed" "$tmp/t3" && ok || bad "--align 128 after 64: $(tail -1 "$tmp/t3")"
"$OLLA" batch -j 2 --align 128 "$tmp/in" "$tmp/out" 2>"$tmp/t4"
grep -q "4 models: 0 converted, 3 unchanged, 1 failed" "$tmp/t4" && ok || bad "same options again: $(tail -1 "$tmp/t4")"
"$OLLA" batch -j 2 --align 128 --dim unused=3 "$tmp/in" "$tmp/out" 2>"$tmp/t5"
grep -q "4 models: 3 converted, 0 unchanged, 1 failed" "$tmp/t5" && ok || bad "a new --dim: $(tail -1 "$tmp/t5")"
# --force redoes everything; an output removed by hand is redone
"$OLLA" batch -j 2 --force --align 128 --dim unused=3 "$tmp/in" "$tmp/out" 2>"$tmp/t6"
grep -q "4 models: 3 converted, 0 unchanged, 1 failed" "$tmp/t6" && ok || bad "--force: $(tail -1 "$tmp/t6")"
rm "$tmp/out/sub/cnn_train.onnx"
"$OLLA" batch -j 2 --report "$tmp/r7.jsonl" --align 128 --dim unused=3 "$tmp/in" "$tmp/out" 2>"$tmp/t7"
grep -q "4 models: 1 converted, 2 unchanged, 1 failed" "$tmp/t7" && ok || bad "removed output: $(tail -1 "$tmp/t7")"
grep '"status":"unchanged"' "$tmp/r7.jsonl" | grep -q '"arena_bytes":[1-9]' && ok || bad "unchanged lines lack the report"
# the output tree inside the input tree is never read as input
"$OLLA" batch -j 2 --report "$tmp/r8.jsonl" "$tmp/in" "$tmp/in/planned" 2>/dev/null
"$OLLA" batch -j 2 --report "$tmp/r9.jsonl" "$tmp/in" "$tmp/in/planned" 2>"$tmp/t9"
grep -q "4 models: 0 converted, 3 unchanged, 1 failed" "$tmp/t9" && [ ! -e "$tmp/in/planned/planned" ] &&
  ! grep -q '"planned/' "$tmp/r9.jsonl" && ok || bad "output tree inside the input: $(tail -1 "$tmp/t9")"
rm -rf "$tmp/in/planned"
"$OLLA" batch "$tmp/in" "$tmp/in" 2>"$tmp/e"; [ $? -eq 2 ] && grep -q "is IN_DIR" "$tmp/e" && ok || bad "OUT_DIR = IN_DIR: $(cat "$tmp/e")"
"$OLLA" batch --report "$tmp/no/r.jsonl" "$tmp/in" "$tmp/out" 2>"$tmp/e"; [ $? -eq 2 ] && grep -q -- "--report $tmp/no/r.jsonl: the folder" "$tmp/e" &&
  ok || bad "unwritable --report is not caught before work: $(cat "$tmp/e")"
"$OLLA" batch --help >/dev/null && ok || bad "batch --help"
# default -j: half the cores, at least one (each solve may use two CPUs)
cores=$(nproc); want=$((cores / 2)); [ $want -lt 1 ] && want=1
"$OLLA" batch -v "$tmp/in" "$tmp/out" 2>"$tmp/tv"
grep -q "olla-onnx batch: 4 models, $want at a time" "$tmp/tv" && ok || bad "default -j on $cores cores: $(head -1 "$tmp/tv")"
# on a terminal: one progress line, redrawn, never wider than 79 columns
if command -v script >/dev/null; then
  script -qfec "'$OLLA' batch --force '$tmp/in' '$tmp/out'" /dev/null >"$tmp/tty" 2>&1
  tr '\r' '\n' <"$tmp/tty" | sed 's/\x1b\[K//g' | grep '^\[[0-9]*/4\] ' >"$tmp/prog"
  grep -q '^\[4/4\] 3 ok, 0 unchanged, 1 failed' "$tmp/prog" && grep -q '^\[[0-3]/4\] .*; .*\.onnx$' "$tmp/prog" &&
    [ -z "$(awk 'length($0) > 79' "$tmp/prog")" ] && ok || bad "progress line: $(cat -v "$tmp/tty" | head -5)"
else
  cli_missing "the terminal checks need script(1) (bsdutils)"
fi
# Ctrl-C (SIGINT to the whole process group, as a terminal sends it)
if /usr/bin/python3 -c 'import onnx' 2>/dev/null && command -v setsid >/dev/null; then
  mkdir -p "$tmp/slow" "$tmp/tmpd"
  cp "$SRC/models/mlp_train.onnx" "$tmp/slow/a_quick.onnx"
  for k in 1 2 3; do /usr/bin/python3 "$SRC/bench/huge_gen.py" 150 "$tmp/slow/b_slow$k.onnx" >/dev/null; done
  TMPDIR=$tmp/tmpd setsid "$OLLA" batch -j 1 --time-limit 60 --report "$tmp/ri.jsonl" "$tmp/slow" "$tmp/so" 2>"$tmp/ti" & pid=$!
  for _ in $(seq 1 100); do [ -f "$tmp/so/a_quick.onnx" ] && break; sleep 0.1; done
  sleep 1
  kill -INT -- -"$pid"; wait "$pid"; rc=$?
  left=$(ls "$tmp/so" "$tmp/tmpd" | grep -v -e '^a_quick.onnx$' -e '^$' -e ':$')
  [ $rc -eq 130 ] && [ "$(grep -c interrupted "$tmp/ti")" -eq 1 ] && ok || bad "Ctrl-C: exit $rc, stderr: $(cat "$tmp/ti")"
  [ "$(wc -l <"$tmp/ri.jsonl")" -eq 1 ] && grep -q '"status":"ok"' "$tmp/ri.jsonl" && ok || bad "Ctrl-C: report $(cat "$tmp/ri.jsonl" 2>&1)"
  [ -z "$left" ] && "$OLLA" check "$tmp/so/a_quick.onnx" >/dev/null && ok || bad "Ctrl-C left: $left"
  grep -q a_quick "$tmp/so/.olla-batch-stamps" && ok || bad "Ctrl-C: the finished model's stamp is lost"
else
  cli_missing "the Ctrl-C checks need /usr/bin/python3 with onnx and setsid (util-linux)"
fi
cli_finish "batch"
