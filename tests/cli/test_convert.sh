#!/usr/bin/env bash
# The command on bundled models: the report, the summary, the checker,
# external data written to another folder, and re-planning a planned model.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-5} ; SRC=${OLLA_SOURCE_DIR:?}
cli_tmp

# report keys and summary
"$OLLA" --report "$tmp/r.json" "$SRC/models/mlp_train.onnx" "$tmp/mlp.onnx" 2>"$tmp/summary" || bad "mlp_train did not plan"
for key in model nodes tensors planned_tensors constant_bytes input_order_peak_bytes peak_bytes arena_bytes \
           lower_bound_bytes schedule_seconds placement_seconds total_seconds schedule_status placement_status \
           input_ort_allocated_bytes ort_allocated_bytes input_ort_default_allocated_bytes ort_default_allocated_bytes \
           input_ort_default_steady_bytes ort_default_steady_bytes ort_settings; do
  grep -q "\"$key\":" "$tmp/r.json" && ok || bad "report lacks $key"
done
grep -qE "mlp_train.onnx: 64 nodes, [0-9]+ tensors \([0-9]+ planned; sharing: runtime, [0-9]+ views?, [0-9]+ in place; runtime: ort\)$" "$tmp/summary" &&
  grep -qE "^  input order with an online best-fit allocator: .* \([0-9.]+% fragmentation\)$" "$tmp/summary" &&
  grep -qE "^  input-order peak: .*, .* with the runtime's sharing, .* as ort runs it; planned peak: .*; arena: " "$tmp/summary" &&
  grep -qE "^  ort runs the written model in the planned order \(best order found: .*, [0-9.]+% below; listing: .*\)$" "$tmp/summary" &&
  grep -qE "^  ONNX Runtime for Node holds, by the model of its planner \(CPU, graph optimizations off, blocks of 4 KiB and more; input -> written; first run, then the most over three runs\):$" "$tmp/summary" &&
  grep -qE "^    arena off, memory pattern on: .* -> .* \(([0-9.]+% (less|more)|[0-9.]+ (B|KiB|MiB|GiB) (less|more)|the same)\); .* -> .* \(([0-9.]+% (less|more)|[0-9.]+ (B|KiB|MiB|GiB) (less|more)|the same)\)$" "$tmp/summary" &&
  grep -qE "^    ORT's defaults \(arena on, memory pattern on\): .* -> .* \(([0-9.]+% (less|more)|[0-9.]+ (B|KiB|MiB|GiB) (less|more)|the same)\); .* -> .* " "$tmp/summary" &&
  grep -qE "^  the written model('s saving shows in ONNX Runtime with: .*| saves nothing in ONNX Runtime under any of these settings); a runtime that follows the plan: " "$tmp/summary" &&
  grep -qE "^  saving: ([0-9.]+%|[0-9.]+ (B|KiB|MiB|GiB) \(under 0.1%\)|none \([0-9.]+ (B|KiB|MiB|GiB) more\)) of what ONNX Runtime allocates with its arena off \(.* for the input, .* for the written model\)$" "$tmp/summary" &&
  grep -qE "^  also -?[0-9.]+% against the online allocator, -?[0-9.]+% against the input-order peak as the runtime runs it, -?[0-9.]+% without sharing" "$tmp/summary" &&
  ! grep -q "today" "$tmp/summary" && ok || bad "summary: $(cat "$tmp/summary")"
# one node is "1 node"; a graph input without a shape is named in a message that reads
if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
  /usr/bin/python3 - "$tmp" <<'PYEOF'
import sys, onnx
from onnx import helper, TensorProto as T
d = sys.argv[1]
one = helper.make_graph([helper.make_node('Relu', ['x'], ['y'], name='r')], 'g',
                        [helper.make_tensor_value_info('x', T.FLOAT, [4])], [helper.make_tensor_value_info('y', T.FLOAT, [4])])
onnx.save(helper.make_model(one), d + '/one.onnx')
q = helper.make_graph([helper.make_node('Relu', ['q'], ['y'], name='r')], 'g',
                      [helper.make_tensor_value_info('q', T.FLOAT, None)], [helper.make_tensor_value_info('y', T.FLOAT, None)])
onnx.save(helper.make_model(q), d + '/noshape.onnx')
PYEOF
  "$OLLA" "$tmp/one.onnx" "$tmp/one.out.onnx" 2>"$tmp/s1"
  grep -qE "one.onnx: 1 node, [0-9]+ tensors" "$tmp/s1" && ok || bad "one node: $(head -1 "$tmp/s1")"
  "$OLLA" "$tmp/noshape.onnx" "$tmp/ns.out.onnx" 2>"$tmp/s2"
  grep -qF "noshape.onnx: 1 tensor ('y') has no size: it depends on graph input 'q', whose shape is not declared; pass --input-shape q=D1,D2,... with its sizes" "$tmp/s2" &&
    ok || bad "graph input without a shape: $(cat "$tmp/s2")"
  rm -f "$tmp/one.onnx" "$tmp/one.out.onnx" "$tmp/noshape.onnx"
fi
for key in input_order_online_arena_bytes input_order_fragmentation; do
  grep -q "\"$key\":" "$tmp/r.json" && ok || bad "report lacks $key"
done
"$OLLA" check "$tmp/mlp.onnx" >/dev/null && ok || bad "check of a planned model failed"
# -q prints nothing
"$OLLA" -q "$SRC/models/mlp_train.onnx" "$tmp/q.onnx" 2>"$tmp/quiet"; [ ! -s "$tmp/quiet" ] && ok || bad "-q printed: $(cat "$tmp/quiet")"
# planning a planned model replaces the olla.* keys (check would fail on duplicates or a stale plan)
"$OLLA" -q --align 128 "$tmp/mlp.onnx" "$tmp/mlp2.onnx" && "$OLLA" check "$tmp/mlp2.onnx" >/dev/null && ok || bad "re-planning"
[ "$(grep -c "olla.plan" "$tmp/mlp2.onnx")" -eq 1 ] && ok || bad "olla.plan appears more than once"
grep -q '"alignment":128' "$tmp/mlp2.onnx" && ok || bad "alignment 128 not in the plan"
# an unplanned model fails the check
"$OLLA" check "$SRC/models/mlp_train.onnx" 2>"$tmp/e"; [ $? -eq 1 ] && grep -q "no olla.plan metadata" "$tmp/e" && ok || bad "check of an unplanned model"
# external data, written to another folder: the data follows
mkdir -p "$tmp/elsewhere/deeper"
"$OLLA" -q "$SRC/models/external_data.onnx" "$tmp/elsewhere/deeper/ext.onnx" || bad "external_data did not plan"
for f in external_data.bin external_data_bias.bin; do
  cmp -s "$SRC/models/$f" "$tmp/elsewhere/deeper/$f" && ok || bad "$f not next to the output"
done
"$OLLA" check "$tmp/elsewhere/deeper/ext.onnx" >/dev/null && ok || bad "check of the moved external-data model"
# never written over itself: the output must not be the input (the input is kept as it was)
cp "$tmp/elsewhere/deeper/ext.onnx" "$tmp/ext.copy"
"$OLLA" -q "$tmp/elsewhere/deeper/ext.onnx" "$tmp/elsewhere/deeper/ext.onnx" 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "is the input model" "$tmp/e" && cmp -s "$tmp/ext.copy" "$tmp/elsewhere/deeper/ext.onnx" && ok ||
  bad "in-place rewrite: rc=$rc $(cat "$tmp/e")"
rm -f "$tmp/ext.copy"
# symbolic dimensions bound on the command line
"$OLLA" -q --dim batch=4 "$SRC/models/symbolic_dims.onnx" "$tmp/sym.onnx" && "$OLLA" check --dim batch=4 "$tmp/sym.onnx" >/dev/null && ok || bad "symbolic dims with --dim"
# --allow-unknown-sizes leaves the unsized tensor out of the plan, and says so
"$OLLA" --allow-unknown-sizes --report "$tmp/u.json" "$SRC/models/bad/unsized_op.onnx" "$tmp/u.onnx" 2>"$tmp/uerr" && ok || bad "--allow-unknown-sizes failed"
grep -q "warning: size of 'm' unknown" "$tmp/uerr" && ok || bad "no warning for the unsized tensor: $(cat "$tmp/uerr")"
grep -q '"name": *"m"' "$tmp/u.json" && ok || bad "the report does not list the unsized tensor"
"$OLLA" check "$tmp/u.onnx" >/dev/null && ok || bad "check of a plan with an unsized tensor"
# progress: plain lines per phase in a log (no control characters), none with -q
"$OLLA" -v "$SRC/models/mlp_train.onnx" "$tmp/v.onnx" 2>"$tmp/verr"
grep -q "mlp_train.onnx: ordering" "$tmp/verr" && grep -q "mlp_train.onnx: placement" "$tmp/verr" && ok || bad "no phase lines with -v: $(head -3 "$tmp/verr")"
! grep -q $'[\r\033]' "$tmp/verr" && ok || bad "control characters in a non-terminal log"
# on a terminal the line is rewritten in place (script gives the command a terminal)
if command -v script >/dev/null; then
  script -qec "\"$OLLA\" \"$SRC/models/mlp_train.onnx\" \"$tmp/tty.onnx\"" /dev/null > "$tmp/tty.log" 2>&1
  grep -q $'\r\033\[K' "$tmp/tty.log" && grep -q "ordering" "$tmp/tty.log" && ok || bad "no live line on a terminal"
else
  cli_missing "the live-line check needs script(1) (bsdutils)"
fi
# ONNX Runtime never holds more with its arena on (its default) for the written listing than for the
# input's, on the first run or over three runs. Where the listing found first would (the CNN step at depth
# 4, width 128, batch 16: 2.9% more on the first run with ORT's defaults), the search runs again refusing
# such listings (arena_searched; there it keeps a saving with the arena off) or the input's listing is
# written ("held more"); the report names the setting and both figures, the summary says why.
# Nor, under any setting, for a listing that saves under 1% everywhere: at depth 3, width 32, batch 4 the
# listing found makes ORT hold the input's bytes under every setting but one, and 7.5% more with the
# arena off and the memory pattern on over three runs; the input's listing is written ("held more").
if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
  refused=0
  for cfg in "4 128 16" "6 64 4" "2 64 8" "3 32 4"; do
    set -- $cfg
    d="$tmp/held_$1_$2_$3"
    /usr/bin/python3 "$SRC/scripts/make_training_models.py" "$d" --kinds cnn --depth "$1" --width "$2" --batch "$3" >/dev/null ||
      { bad "make_training_models.py cnn $cfg"; continue; }
    "$OLLA" --report "$d/r.json" "$d/cnn.onnx" "$d/out.onnx" 2>"$d/summary" || { bad "cnn $cfg did not plan"; continue; }
    /usr/bin/python3 - "$d/r.json" "$d/cnn.onnx" "$d/out.onnx" "$cfg" <<'PY' && ok || bad "cnn $cfg: ORT holds more for the written listing: $(cat "$d/r.json")"
import json, sys, onnx
r = json.load(open(sys.argv[1]))
for s in r["ort_settings"]:
    if s["enableCpuMemArena"]:
        assert s["first_run_bytes"] <= s["input_first_run_bytes"] * 1.001, s
        assert s["steady_bytes"] <= s["input_steady_bytes"] * 1.001, s
held = r["runtime_search"] == "held more"
figures = [(s["input_" + k], s[k]) for s in r["ort_settings"] for k in ("first_run_bytes", "steady_bytes")]
if held or r["arena_searched"]:
    h = r["held_more"]
    # beyond 0.1%: with its arena on, or under any setting for a listing that would have saved nothing
    assert h["run"] in ("first", "three runs") and h["bytes"] > h["input_bytes"] * 1.001, h
    assert h["enableCpuMemArena"] or held, h
else:
    assert "held_more" not in r, r["held_more"]
if held:
    names = lambda f: [n.name for n in onnx.load(f, load_external_data=False).graph.node]
    assert names(sys.argv[2]) == names(sys.argv[3]), "the input's listing was not written"
if sys.argv[4] == "4 128 16":
    assert r["arena_searched"] and r["saving_planned_bytes"] < r["saving_input_bytes"], r
if sys.argv[4] == "3 32 4":
    h = r["held_more"]
    assert held and not h["enableCpuMemArena"] and h["enableMemPattern"] and h["run"] == "three runs", r
    assert h["bytes"] > h["input_bytes"] * 1.05, h
    assert all(w == i for i, w in figures), figures
PY
    if grep -qE '"(runtime_search": *"held more|arena_searched": *true)' "$d/r.json"; then
      refused=$((refused + 1))
      grep -qE "^  (the input's listing is written|the listing was searched again refusing what the arena would hold more for): the best listing found would make ONNX Runtime hold .* not .* \\(([0-9.]+% more|[0-9.]+ (B|KiB|MiB|GiB) more)\\), with (ORT's defaults \\(arena on, memory pattern on\\)|arena (on|off), memory pattern (on|off)), (on the first run|the most over three runs)$" "$d/summary" &&
        ok || bad "cnn $cfg: the summary does not say why: $(cat "$d/summary")"
    fi
  done
  [ "$refused" -ge 1 ] && ok || bad "no generated CNN step had a listing refused: the check above tested nothing"
fi
# --version and --help
"$OLLA" --version | grep -qE "^olla-onnx [0-9]+\.[0-9]+\.[0-9]+$" && ok || bad "--version"
"$OLLA" --help | grep -q -- "--time-limit" && ok || bad "--help"
cli_finish "convert"
