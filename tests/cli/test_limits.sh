#!/usr/bin/env bash
# Output that cannot be written (a full disk, a file-size limit) fails
# cleanly: exit 3, a one-line message, no output and no temporary file.
set -u
OLLA=${OLLA:?} ; export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-5} ; SRC=${OLLA_SOURCE_DIR:?}
. "$(dirname "$0")/lib.sh"
cli_tmp
# a file-size limit of 8 KiB: the planned infer_small model is larger
( ulimit -f 8; "$OLLA" -q "$SRC/models/infer_small.onnx" "$tmp/out.onnx" ) 2>"$tmp/err"; rc=$?
if [ $rc -eq 3 ] && grep -q "cannot write .*out.onnx: File too large; nothing was written" "$tmp/err" &&
   [ -z "$(ls "$tmp" | grep -v '^err$')" ]; then ok; else
  bad "file-size limit: rc=$rc $(cat "$tmp/err"); files: $(ls "$tmp")"; fi
# a real full file system, where this machine lets us mount one
mkdir -p "$tmp/full"
if mount -t tmpfs -o size=16k tmpfs "$tmp/full" 2>/dev/null; then
  "$OLLA" -q "$SRC/models/infer_small.onnx" "$tmp/full/out.onnx" 2>"$tmp/err"; rc=$?
  left=$(ls "$tmp/full")
  umount "$tmp/full"
  if [ $rc -eq 3 ] && grep -q "No space left on device; nothing was written" "$tmp/err" && [ -z "$left" ]; then
    ok; else bad "full disk: rc=$rc $(cat "$tmp/err"); left: $left"; fi
else
  echo "note: cannot mount a tmpfs here; the full-disk case is covered by the file-size limit"
fi
# a report, drawing or lifetimes file that does not fit: failure, no partial
# file, and no model either (all of the outputs or none)
mkdir -p "$tmp/full2"
if mount -t tmpfs -o size=16k tmpfs "$tmp/full2" 2>/dev/null; then
  head -c 16384 /dev/zero >"$tmp/full2/fill" 2>/dev/null
  for what in --report --svg --lifetimes; do
    "$OLLA" -q $what "$tmp/full2/side" "$SRC/models/mlp_train.onnx" "$tmp/m.onnx" 2>"$tmp/err"; rc=$?
    left=$(ls "$tmp/full2" | grep -v '^fill$')
    [ -e "$tmp/m.onnx" ] && left="$left m.onnx (the model, written before the failing $what)"
    if [ $rc -eq 3 ] && grep -q "cannot write $tmp/full2/side: No space left on device; nothing was written" "$tmp/err" &&
       [ -z "$left" ]; then ok; else
      bad "$what on a full disk: rc=$rc $(cat "$tmp/err"); left: $left"; fi
    rm -f "$tmp/m.onnx"
  done
  umount "$tmp/full2"
fi
# an output folder that does not exist: a usage error found before any work
"$OLLA" -q "$SRC/models/mlp_train.onnx" "$tmp/no/such/dir/out.onnx" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "the folder $tmp/no/such/dir does not exist" "$tmp/err" && ok || bad "missing folder: rc=$rc $(cat "$tmp/err")"
# all of the outputs or none: the model (8 KiB) fits a 12 KiB file-size
# limit, the drawing (13 KiB) does not; the model written first is removed
mkdir -p "$tmp/some"
( ulimit -f 12; "$OLLA" -q --report "$tmp/some/r.json" --svg "$tmp/some/p.svg" "$SRC/models/mlp_train.onnx" "$tmp/some/m.onnx" ) 2>"$tmp/err"; rc=$?
left=$(ls "$tmp/some")
if [ $rc -eq 3 ] && grep -q "cannot write $tmp/some/p.svg: File too large; nothing was written" "$tmp/err" && [ -z "$left" ]; then
  ok; else bad "a failing --svg left other outputs: rc=$rc $(cat "$tmp/err"); left: $left"; fi
cli_finish "limits"
