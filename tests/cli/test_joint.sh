#!/usr/bin/env bash
# --joint: small models go through the joint ILP, larger ones fall back to
# the two-step plan; every output passes the checker and the report says
# whether the joint plan was used.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
cli_tmp
arena() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["arena_bytes"])' "$1"; }

# too big for the joint ILP: the two-step plan, with the reason in a verbose line
"$OLLA" -v --runtime listed --joint --time-limit 5 --report "$tmp/r.json" "$SRC/models/mlp_train.onnx" "$tmp/mlp.onnx" 2>"$tmp/e" &&
  ok || bad "mlp_train --joint failed: $(tail -3 "$tmp/e")"
# skipped because the runtime's in-place writes depend on the order (the
# joint ILP places tensors without them), the two-step arena already meets
# the lower bound, or 64 nodes are over the guard
grep -qE "joint ILP skipped: (in-place writes depend on the order|64 nodes, above its limit|the arena already equals the lower bound)" "$tmp/e" && ok || bad "no fallback line: $(cat "$tmp/e")"
grep -q '"joint_used":false' "$tmp/r.json" && ok || bad "joint_used not false: $(cat "$tmp/r.json")"
"$OLLA" check "$tmp/mlp.onnx" >/dev/null && ok || bad "check of mlp_train --joint"

# small models in the paper's memory model (no sharing), for a runtime that
# follows the file (the joint ILP chooses the order itself): the joint ILP runs
# (or is not needed: the two-step arena is already the lower bound); never a
# larger arena than without it
for m in infer_small multi_output if_loop; do
  "$OLLA" -q --runtime listed --sharing none --time-limit 10 --report "$tmp/a.json" "$SRC/models/$m.onnx" "$tmp/a.onnx" || bad "$m two-step failed"
  "$OLLA" -v --runtime listed --sharing none --joint --time-limit 10 --report "$tmp/b.json" "$SRC/models/$m.onnx" "$tmp/b.onnx" 2>"$tmp/e" ||
    bad "$m --joint failed: $(tail -3 "$tmp/e")"
  grep -qE "olla: joint ILP: [0-9]+ columns, arena|joint ILP skipped: the arena already equals the lower bound" "$tmp/e" &&
    ok || bad "$m: no joint ILP line: $(cat "$tmp/e")"
  grep -q '"joint_used":' "$tmp/b.json" && ok || bad "$m: report lacks joint_used"
  [ "$(arena "$tmp/b.json")" -le "$(arena "$tmp/a.json")" ] && ok || bad "$m: --joint arena is larger"
  "$OLLA" check "$tmp/b.onnx" >/dev/null && ok || bad "$m: check of the --joint output"
done

cli_finish "joint"
