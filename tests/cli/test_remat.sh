#!/usr/bin/env bash
# --memory-limit and tradeoff: limits are parsed and refused before any
# work; an impossible limit is one line, exit 1, nothing written; a limit
# above the peak changes nothing; under a limit the written model peaks
# under it in every runtime and sharing mode, keeps the input's nodes and
# graph I/O, adds only copies of nodes that may run again
# (tests/tools/check_remat.py), passes `check`, and gives the input's
# outputs bit for bit in ONNX Runtime (when onnxruntime-node is installed).
# Models: scripts/make_remat_models.py (activations dominate) and the
# bundled training graphs.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
PY=/usr/bin/python3
cli_tmp
jnum() { $PY -c "import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); print('null' if v is None else v)" "$1" "$2"; }

cli_need_python onnx
$PY "$SRC/scripts/make_remat_models.py" --out "$tmp/m" >/dev/null || { echo "FAIL: make_remat_models.py"; exit 1; }

# ---- usage errors: exit 2 before the model is read (the model does not exist)
for lim in abc 0 -5 '' 101% 0% 1.5 12KB 1e3; do
  "$OLLA" --memory-limit "$lim" "$tmp/nope.onnx" "$tmp/out.onnx" >"$tmp/o" 2>"$tmp/e"; rc=$?
  [ $rc -eq 2 ] && grep -q -- "--memory-limit" "$tmp/e" && ! grep -q "nope.onnx" "$tmp/e" && [ "$(wc -l <"$tmp/e")" -eq 1 ] &&
    [ ! -e "$tmp/out.onnx" ] && ok || bad "--memory-limit '$lim': exit $rc, $(cat "$tmp/e")"
done
"$OLLA" --memory-limit "$tmp/nope.onnx" >/dev/null 2>"$tmp/e"; [ $? -eq 2 ] && ok || bad "--memory-limit without a value"
"$OLLA" --keep-order --memory-limit 60% "$tmp/nope.onnx" "$tmp/out.onnx" 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "keep-order" "$tmp/e" && ok || bad "--memory-limit with --keep-order: exit $rc, $(cat "$tmp/e")"
"$OLLA" batch --memory-limit abc "$tmp/m" "$tmp/b" 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--memory-limit" "$tmp/e" && ok || bad "batch --memory-limit abc: exit $rc, $(cat "$tmp/e")"
"$OLLA" tradeoff --memory-limit 60% "$tmp/m/unet_infer.onnx" 2>"$tmp/e"; [ $? -eq 2 ] && ok || bad "tradeoff --memory-limit accepted"
"$OLLA" tradeoff --points 1 "$tmp/m/unet_infer.onnx" 2>"$tmp/e"; [ $? -eq 2 ] && ok || bad "tradeoff --points 1 accepted"

# ---- an impossible limit: one line naming the smallest peak found and the bound, exit 1, nothing written
"$OLLA" -q --runtime listed --memory-limit 1K --report "$tmp/r.json" "$tmp/m/unet_infer.onnx" "$tmp/out.onnx" 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/e")" -eq 1 ] && grep -q "smallest peak found" "$tmp/e" && grep -q "no plan can peak below" "$tmp/e" &&
  [ ! -e "$tmp/out.onnx" ] && [ ! -e "$tmp/r.json" ] && ok || bad "impossible limit: exit $rc, $(cat "$tmp/e")"
# the bound it names is one no plan passes: the smallest peak tradeoff finds is above it
"$OLLA" tradeoff -q --runtime listed --points 3 --csv "$tmp/c.csv" --svg "$tmp/c.svg" "$tmp/m/unet_infer.onnx" >"$tmp/t" 2>&1; rc=$?
bound=$(sed -n 's/.*no plan can peak below \([0-9]*\) bytes.*/\1/p' "$tmp/e")
small=$(sed -n 's/.*the smallest peak found with recomputation is \([0-9]*\) bytes.*/\1/p' "$tmp/e")
[ $rc -eq 0 ] && [ -n "$bound" ] && [ -n "$small" ] && [ "$small" -ge "$bound" ] && ok || bad "tradeoff: exit $rc; bound '$bound', smallest '$small'"
# the curve: header plus points, peaks falling as extra compute rises, at or under each limit
$PY - "$tmp/c.csv" <<'EOF' && ok || bad "tradeoff CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) >= 2, rows
assert rows[0]["copies"] == "0" and rows[0]["status"] == "none", rows[0]
for r in rows:
    assert int(r["peak_bytes"]) <= int(r["limit_bytes"]), r
assert int(rows[-1]["peak_bytes"]) < int(rows[0]["peak_bytes"]), rows
assert float(rows[-1]["extra_fraction"]) > 0, rows[-1]
EOF
grep -q "<polyline class=\"curve\"" "$tmp/c.svg" && [ "$(grep -c 'class="point"' "$tmp/c.svg")" -ge 2 ] && ok || bad "tradeoff SVG"

# ---- a limit above the peak: nothing recomputed, said so, the plan is the no-limit one
"$OLLA" --runtime listed --memory-limit 100% --report "$tmp/r100.json" "$tmp/m/unet_infer.onnx" "$tmp/o100.onnx" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q "nothing recomputed" "$tmp/e" && [ "$(jnum "$tmp/r100.json" recomputed_nodes)" = 0 ] &&
  [ "$(jnum "$tmp/r100.json" recompute_status)" = "not needed" ] && ok || bad "limit 100%: exit $rc, $(tail -1 "$tmp/e")"
# the same nodes and offsets as without a limit; the plan records the limit it meets
"$OLLA" -q --runtime listed --report "$tmp/r0.json" "$tmp/m/unet_infer.onnx" "$tmp/o0.onnx" &&
  [ "$(jnum "$tmp/r0.json" memory_limit_bytes)" = null ] && $PY - "$tmp/o0.onnx" "$tmp/o100.onnx" <<'EOF' && ok ||
import json, sys, onnx
a, b = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
assert [n.SerializeToString() for n in a.graph.node] == [n.SerializeToString() for n in b.graph.node]
pa = json.loads({p.key: p.value for p in a.metadata_props}["olla.plan"])
pb = json.loads({p.key: p.value for p in b.metadata_props}["olla.plan"])
assert "memory_limit" not in pa and pb.pop("memory_limit") > 0
assert pa == pb
EOF
  bad "a limit above the peak changed the written model"

# ---- under limits, in every runtime and sharing mode
ort_ok=0
if command -v node >/dev/null && [ -d "$SRC/tests/ort/node_modules/onnxruntime-node" ]; then ort_ok=1
else cli_missing "the ONNX Runtime output comparisons need node and tests/ort/node_modules (scripts/setup_ort.sh)"; fi
copies_seen=0
for m in unet_infer mlp_deep_train; do
  for rt in listed ort ort-priority; do
    for sh in runtime none; do
      for lim in 95% 85%; do
        out="$tmp/$m.$rt.$sh.$lim.onnx"; rep="$tmp/$m.$rt.$sh.$lim.json"
        "$OLLA" -q --runtime $rt --sharing $sh --memory-limit $lim --report "$rep" "$tmp/m/$m.onnx" "$out" 2>"$tmp/e"; rc=$?
        if [ $rc -eq 1 ] && grep -q "no plan fits" "$tmp/e" && [ ! -e "$out" ]; then ok; continue; fi
        [ $rc -eq 0 ] || { bad "$m $rt $sh $lim: exit $rc, $(cat "$tmp/e")"; continue; }
        peak=$(jnum "$rep" peak_bytes); limit=$(jnum "$rep" memory_limit_bytes); nolim=$(jnum "$rep" no_limit_peak_bytes)
        [ "$peak" -le "$limit" ] && [ "$limit" -lt "$nolim" ] && ok || bad "$m $rt $sh $lim: peak $peak, limit $limit, no-limit $nolim"
        n=$(jnum "$rep" recomputed_nodes); [ "$n" -gt 0 ] && copies_seen=$((copies_seen+1))
        $PY "$SRC/tests/tools/check_remat.py" "$tmp/m/$m.onnx" "$out" --min-copies "$n" >"$tmp/c" && ok || bad "$m $rt $sh $lim: $(cat "$tmp/c")"
        "$OLLA" check "$out" >"$tmp/c" 2>&1 && ok || bad "check $m $rt $sh $lim: $(cat "$tmp/c")"
        $PY - "$rep" <<'EOF' && ok || bad "$m $rt $sh $lim: report fields"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("memory_limit_bytes", "no_limit_peak_bytes", "recomputed_tensors", "recomputed_nodes",
          "recompute_extra_flops", "recompute_extra_fraction", "recompute_status", "recompute_peak_bound"):
    assert k in r, k
assert r["recompute_status"] in ("optimal", "feasible", "not needed"), r["recompute_status"]
assert (r["recomputed_nodes"] > 0) == (r["recompute_extra_flops"] > 0), r
assert 0 <= r["recompute_extra_fraction"] < 10, r
assert r["recompute_peak_bound"] <= r["peak_bytes"], r
EOF
        # the ONNX Runtime figures of the written side are the written model's:
        # those of the file planned again with its listing kept
        if [ $rt = ort ] && [ $sh = runtime ]; then
          "$OLLA" -q --keep-order --report "$rep.again" "$out" "$out.again.onnx" 2>"$tmp/e" &&
            $PY - "$rep" "$rep.again" <<'EOF' && ok || bad "$m $rt $lim: the written side's ONNX Runtime figures are not the written model's: $(cat "$tmp/e")"
import json, sys
r, again = (json.load(open(p)) for p in sys.argv[1:3])
assert r["ort_allocated_bytes"] == again["input_ort_allocated_bytes"], (r["ort_allocated_bytes"], again["input_ort_allocated_bytes"])
for w, a in zip(r["ort_settings"], again["ort_settings"]):
    assert w["first_run_bytes"] == a["input_first_run_bytes"] and w["steady_bytes"] == a["input_steady_bytes"], (w, a)
assert r["ort_default_allocated_bytes"] == again["input_ort_default_allocated_bytes"], r
EOF
        fi
        if [ $ort_ok -eq 1 ] && [ $sh = runtime ]; then
          node "$SRC/tests/ort/compare.mjs" "$tmp/m/$m.onnx" "$out" >"$tmp/c" 2>&1 && ok || bad "ORT outputs $m $rt $lim: $(tail -2 "$tmp/c")"
        fi
      done
    done
  done
done
[ $copies_seen -ge 8 ] && ok || bad "only $copies_seen plans recomputed anything"

# ---- check reads the limit the plan records and refuses a plan above it
last=$(ls "$tmp"/unet_infer.listed.runtime.*.onnx 2>/dev/null | head -1)
if [ -n "$last" ]; then
  $PY - "$last" "$tmp/tampered.onnx" <<'EOF' && ok || bad "olla.plan records no memory_limit"
import json, sys, onnx
m = onnx.load(sys.argv[1])
for p in m.metadata_props:
    if p.key == "olla.plan":
        plan = json.loads(p.value)
        assert plan["memory_limit"] > 0, plan.get("memory_limit")
        plan["memory_limit"] = 1000
        p.value = json.dumps(plan)
onnx.save(m, sys.argv[2])
EOF
  "$OLLA" check "$tmp/tampered.onnx" >"$tmp/c" 2>&1; rc=$?
  [ $rc -eq 1 ] && grep -q "above its memory limit of 1000 bytes" "$tmp/c" && ok || bad "check of a plan above its limit: exit $rc, $(cat "$tmp/c")"
else
  bad "no plan of unet_infer under --runtime listed"
fi

# ---- the bundled training graphs: an impossible or a possible limit, never a wrong plan
for m in mlp_train cnn_train; do
  "$OLLA" -q --memory-limit 90% --report "$tmp/$m.json" "$SRC/models/$m.onnx" "$tmp/$m.out.onnx" 2>"$tmp/e"; rc=$?
  if [ $rc -eq 0 ]; then
    [ "$(jnum "$tmp/$m.json" peak_bytes)" -le "$(jnum "$tmp/$m.json" memory_limit_bytes)" ] &&
      "$OLLA" check "$tmp/$m.out.onnx" >/dev/null 2>&1 && ok || bad "$m 90%"
  else
    [ $rc -eq 1 ] && grep -q "no plan fits" "$tmp/e" && ok || bad "$m 90%: exit $rc, $(cat "$tmp/e")"
  fi
done
cli_finish "remat"
