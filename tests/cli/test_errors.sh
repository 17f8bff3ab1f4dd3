#!/usr/bin/env bash
# Each bad input: the exact message, exit code 1, and no output file.
set -u
OLLA=${OLLA:?} ; export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-5} ; SRC=${OLLA_SOURCE_DIR:?}
. "$(dirname "$0")/lib.sh"
cli_tmp
expect() { # expect CODE "message substring" args...
  local code=$1 msg=$2; shift 2
  rm -f "$tmp/out.onnx"
  local err; err=$("$OLLA" "$@" 2>&1 >/dev/null); local rc=$?
  if [ "$rc" -ne "$code" ]; then bad "$* exited $rc, wanted $code: $err"; return; fi
  if ! grep -qF -- "$msg" <<<"$err"; then bad "$*: message '$err' lacks '$msg'"; return; fi
  if [ "$(printf '%s' "$err" | wc -l)" -gt 0 ]; then bad "$*: more than one line: $err"; return; fi
  if ls "$tmp" | grep -q .; then bad "$*: left files behind: $(ls "$tmp")"; return; fi
  ok
}
B=$SRC/models/bad
expect 1 "not_onnx.onnx: not an ONNX model: unsupported protobuf wire type 4 at byte 0 in the model" "$B/not_onnx.onnx" "$tmp/out.onnx"
expect 1 "truncated.onnx: truncated: field 7 at byte 77 in the model needs 18309 bytes, only 9117 remain in the file" "$B/truncated.onnx" "$tmp/out.onnx"
expect 1 "no_graph.onnx: the model has no graph" "$B/no_graph.onnx" "$tmp/out.onnx"
expect 1 "two_producers.onnx: tensor 't' is produced twice, by node 'first' (Relu) and by node 'second' (Neg)" "$B/two_producers.onnx" "$tmp/out.onnx"
expect 1 "missing_input.onnx: node 'add_ghost' (Add) reads 'ghost', which no node, graph input or initializer produces" "$B/missing_input.onnx" "$tmp/out.onnx"
expect 1 "cycle.onnx: the graph has a cycle through node 'cycle_a' (Add)" "$B/cycle.onnx" "$tmp/out.onnx"
expect 1 "external_escape.onnx: tensor 'W' has external data at '../outside.bin', a path that leaves the model's folder" "$B/external_escape.onnx" "$tmp/out.onnx"
expect 1 "external_absolute.onnx: tensor 'W' has external data at '/etc/passwd', a path that leaves the model's folder" "$B/external_absolute.onnx" "$tmp/out.onnx"
expect 1 "external_missing.onnx: tensor 'W': external data file '$B/nope.bin' is missing (No such file or directory)" "$B/external_missing.onnx" "$tmp/out.onnx"
expect 1 "unsized_op.onnx: cannot plan 'm' (output of node 'mystery' (Mystery)): unsupported operator com.example:Mystery at node 'mystery'; declare its shape in value_info, or pass --allow-unknown-sizes to leave it out of the plan" "$B/unsized_op.onnx" "$tmp/out.onnx"
expect 1 "nothing.onnx: cannot open: No such file or directory" "$tmp/nothing.onnx" "$tmp/out.onnx"
expect 1 "symbolic_dims.onnx: 7 tensors" "$SRC/models/symbolic_dims.onnx" "$tmp/out.onnx"
expect 1 "have no size: they depend on graph input 'x', whose dimension batch has no value; pass --input-shape x=batch,16,32 with a size in place of each name, or --dim batch=N" "$SRC/models/symbolic_dims.onnx" "$tmp/out.onnx"
# a symbolic link that points out of the model's folder
mkdir -p "$tmp/m"; cp "$SRC/models/external_data.onnx" "$tmp/m/"; ln -s "$SRC/models/external_data.bin" "$tmp/m/external_data.bin"; cp "$SRC/models/external_data_bias.bin" "$tmp/m/"
rm -f "$tmp/out.onnx"
err=$("$OLLA" "$tmp/m/external_data.onnx" "$tmp/m/out.onnx" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -qF "outside the model's folder" <<<"$err" && [ ! -e "$tmp/m/out.onnx" ]; then ok; else bad "symlink escape: rc=$rc $err"; fi
rm -rf "$tmp/m"
# usage errors exit 2
expect 2 "usage: olla-onnx" "$B/cycle.onnx"
expect 2 "unknown option '--frobnicate'" --frobnicate a b
expect 2 "--dim batch: needs NAME=VALUE" --dim batch a b
expect 2 "--align 0: needs a power of two" --align 0 a b
expect 2 "--align 3: needs a power of two from 1 to 1073741824 (bytes)" --align 3 a b
expect 2 "--align 100: needs a power of two" --align 100 a b
expect 2 "--time-limit -1: needs a positive number" --time-limit -1 a b
expect 2 "too many arguments" a b c
expect 2 "--dim batch=3: 'batch' is already bound to 2; give each name once" --dim batch=2 --dim batch=3 a b
# a copy, so that a binary that wrongly plans in place cannot touch the source tree
mdir=$(mktemp -d); cli_on_exit 'rm -rf "$mdir"'
cp "$SRC/models/mlp_train.onnx" "$mdir/"; M=$mdir/mlp_train.onnx
OLLA_TIME_LIMIT=abc expect 2 "OLLA_TIME_LIMIT=abc: needs a positive number of seconds" "$M" "$tmp/out.onnx"
OLLA_TIME_LIMIT=-3 expect 2 "OLLA_TIME_LIMIT=-3: needs a positive number of seconds" "$M" "$tmp/out.onnx"
# a --dim name the model does not use: known only after loading, still before any planning
expect 2 "--dim bacth=2: $SRC/models/symbolic_dims.onnx has no symbolic dimension named 'bacth' (its names: batch)" \
  --dim batch=2 --dim bacth=2 "$SRC/models/symbolic_dims.onnx" "$tmp/out.onnx"
expect 2 "--dim seq=4: $M has no symbolic dimension named 'seq' (it declares none)" --dim seq=4 "$M" "$tmp/out.onnx"
# outputs are checked before the model is even read: the input here does not exist
expect 2 "the output model $tmp/no/such/dir/out.onnx: the folder $tmp/no/such/dir does not exist" \
  "$tmp/missing.onnx" "$tmp/no/such/dir/out.onnx"
expect 2 "--report $tmp/no/r.json: the folder $tmp/no does not exist" --report "$tmp/no/r.json" "$tmp/missing.onnx" "$tmp/out.onnx"
expect 2 "--svg $tmp/no/p.svg: the folder" --svg "$tmp/no/p.svg" "$M" "$tmp/out.onnx"
expect 2 "--lifetimes $tmp/no/l.csv: the folder" --lifetimes "$tmp/no/l.csv" "$M" "$tmp/out.onnx"
expect 2 "--report $tmp: is a folder" --report "$tmp" "$M" "$tmp/out.onnx"
expect 2 "the output model $M: is the input model" "$M" "$M"
expect 2 "the output model and --report are both $tmp/out.onnx" --report "$tmp/out.onnx" "$M" "$tmp/out.onnx"
# the same through another path to the same file
expect 2 "is the input model" "$M" "$mdir/../$(basename "$mdir")/mlp_train.onnx"
# a folder that takes no new files (a read-only mount, where this machine lets us make one)
ro=$(mktemp -d)
if mount -t tmpfs -o size=64k,ro tmpfs "$ro" 2>/dev/null; then
  expect 2 "--report $ro/r.json: cannot create files in $ro (Read-only file system)" --report "$ro/r.json" "$M" "$tmp/out.onnx"
  umount "$ro"
fi
rmdir "$ro"
# check and shapes: the same --dim rules
expect 2 "--dim batch=3: 'batch' is already bound to 2" check --dim batch=2 --dim batch=3 "$M"
expect 2 "olla-onnx check: --dim bacth=1: $M has no symbolic dimension named 'bacth'" check --dim bacth=1 "$M"
expect 2 "olla-onnx shapes: --dim bacth=1: $M has no symbolic dimension named 'bacth'" shapes --dim bacth=1 "$M"
expect 2 "olla-onnx place: --align 3: needs a power of two" place --align 3 a.csv b.csv
cli_finish "errors"
