#!/usr/bin/env bash
# The ONNX Runtime measurement tools themselves (tests/ort/README.md):
# - the allocation counter, from inside a process (alloc_counter_probe: exact
#   figures for every wrapped function, windows, table growth, threads);
# - measure.sh / measure.mjs on a MatMul chain whose peak is known: at least
#   the two intermediates live together, less than that plus 64 KiB (a counter
#   that missed frees would see a third intermediate, more than the slack);
#   the figure is the calling thread's, which other processes' load does not
#   change (the all-threads figure gained up to 200 KB under load); several
#   models in one process with --settings all, a skip line for one that does
#   not load;
# - exec_order.mjs on a multi-branch model: every node once, producers first,
#   ORT's own order rather than the listing, unnamed nodes as OpType_index, no
#   profile file left behind;
# - the usage, skip and not-preloaded paths.
# Needs node, tests/ort/node_modules (scripts/setup_ort.sh), /usr/bin/python3
# with onnx and the counter built (Linux); exits 77 (skipped) without them.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
bin="${OLLA_BINARY_DIR:?OLLA_BINARY_DIR must point at the build tree}"
py=/usr/bin/python3
. "$src/tests/ort/ort_env.sh"
probe="$bin/tests/ort/alloc_counter_probe"
ort_skip_unless_ready onnx counter
if [ ! -x "$probe" ]; then
  echo "skipped: the allocation counter is not built in $bin/tests/ort (it needs Linux and glibc)"; exit 77
fi
. "$src/tests/cli/lib.sh"
cli_tmp
work=$tmp

# --- The counter inside a process: exact figures.
out="$(ALLOC_COUNTER_OUT="$work/probe.json" LD_PRELOAD="$lib" "$probe" "$work/probe.json" 2>&1)"
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || bad "alloc_counter_probe exited $rc with the counter preloaded"
out="$("$probe" "$work/probe.json" 2>&1)" && bad "alloc_counter_probe passed without the counter: $out"
grep -q "the counter wrote no result" <<<"$out" && ok "the probe fails without the counter"

# --- Models made for the test.
facts="$("$py" "$ort/make_test_models.py" "$work" --batch 256)" || { bad "make_test_models.py: $facts"; exit 1; }
eval "$facts"   # H1_BYTES H2_BYTES H3_BYTES Y_BYTES X_BYTES at batch 256
slack=65536
[ "$H3_BYTES" -gt "$slack" ] || bad "the model does not separate a missed free from the slack"

# measure CODE ARGS...: runs measure.sh, keeps stdout in $mout and stderr in $merr.
measure() {
  local code="$1"; shift
  mout="$("$ort/measure.sh" --lib "$lib" "$@" 2>"$work/stderr")"; local rc=$?
  merr="$(cat "$work/stderr")"
  if [ "$rc" -ne "$code" ]; then bad "measure.sh $* exited $rc, expected $code: $mout $merr"; return 1; fi
}


# check_peaks BATCH LINES: every run's peak in [h1 + h2, h1 + h2 + slack) at
# BATCH; sets nruns to the number of run lines.
check_peaks() {
  local batch="$1" lines="$2" low high n=0
  low=$(( (H1_BYTES + H2_BYTES) * batch / 256 )); high=$((low + slack))
  while IFS= read -r line; do
    n=$((n + 1))
    local peak run all
    peak="$(json_int peak_bytes "$line")"; run="$(json_int run "$line")"; all="$(json_int all_threads_peak_bytes "$line")"
    if [ -z "$peak" ] || [ -z "$all" ] || [ "$run" != "$n" ]; then bad "batch $batch: not a run line: $line"; continue; fi
    # Node's own threads may add to the all-threads figure (more so on a
    # loaded machine), never take from it.
    [ "$all" -ge "$peak" ] || bad "batch $batch run $run: all_threads_peak_bytes $all < peak_bytes $peak"
    if [ "$peak" -ge "$low" ] && [ "$peak" -lt "$high" ]; then
      ok "matmul_chain batch $batch run $run: peak $peak in [$low, $high)"
    else
      bad "matmul_chain batch $batch run $run: peak $peak not in [$low, $high)"
    fi
  done <<<"$lines"
  nruns="$n"
}

if measure 0 "$work/matmul_chain.onnx" --dim batch=256 --runs 3; then
  check_peaks 256 "$mout"
  [ "$nruns" = 3 ] || bad "--runs 3 printed $nruns run lines: $mout"
  start="$(json_int live_at_start "$(head -n 1 <<<"$mout")")"
  [ "${start:-0}" -ge "$X_BYTES" ] || bad "live_at_start ${start:-none} is below the input's $X_BYTES bytes"
fi
if measure 0 "$work/matmul_chain.onnx" --dim batch=128; then
  check_peaks 128 "$mout"
  [ "$nruns" = 2 ] || bad "the default is two runs: $mout"
fi
measure 0 "$work/matmul_chain.onnx" --runs 1 &&
  { grep -q "dimension 'batch' is not bound by --dim; using 1" <<<"$merr" && ok "unbound dims are 1 and said" ||
    bad "no note on the unbound dim: $merr"; }
measure 0 "$work/matmul_chain.onnx" --dim batch=256 --runs 1 --opt all &&
  { [ "$(json_int peak_bytes "$mout")" -gt 0 ] && ok "--opt all measures" || bad "--opt all: $mout"; }

# Usage, skip and not-preloaded paths.
measure 2 "$work/matmul_chain.onnx" --opt fast && ok "--opt fast is refused"
measure 2 "$work/matmul_chain.onnx" --runs 0 && ok "--runs 0 is refused"
printf 'not a model' >"$work/garbage.onnx"
measure 77 "$work/garbage.onnx" && grep -q "^SKIP " <<<"$mout" && ok "an unloadable model is skipped"
measure 2 "$work/matmul_chain.onnx" "$work/matmul_chain.onnx" --runs 1 && ok "several models only with --settings all"
# Several models in one process: four lines per model that runs (the first
# run at least the two intermediates, three runs at least the first), one
# skip line for one that does not, exit 0.
if measure 0 "$work/matmul_chain.onnx" "$work/garbage.onnx" --dim batch=256 --settings all; then
  low=$(( H1_BYTES + H2_BYTES ))
  n="$(grep -c "\"model\":\"$work/matmul_chain.onnx\",\"arena\"" <<<"$mout")"
  [ "$n" = 4 ] || bad "--settings all printed $n lines for the model that runs: $mout"
  while IFS= read -r line; do
    first="$(json_int first_run_bytes "$line")"; steady="$(json_int steady_bytes "$line")"
    [ "$first" -ge "$low" ] && [ "$steady" -ge "$first" ] || bad "--settings all: first $first, three runs $steady: $line"
  done < <(grep '"arena"' <<<"$mout")
  grep -q "\"model\":\"$work/garbage.onnx\",\"skip\":\"ONNX Runtime cannot load it" <<<"$mout" &&
    ok "--settings all over two models: four settings for the one that runs, a skip line for the other" ||
    bad "no skip line for the unloadable model: $mout"
fi
out="$("$ort/measure.sh" --lib "$work/none.so" "$work/matmul_chain.onnx" 2>&1)"; rc=$?
[ "$rc" -eq 2 ] && grep -q "no allocation counter" <<<"$out" && ok "a missing --lib is refused" ||
  bad "measure.sh --lib missing: exit $rc: $out"
out="$(node "$ort/measure.mjs" "$work/matmul_chain.onnx" 2>&1)"; rc=$?
[ "$rc" -eq 2 ] && grep -q "allocation counter is not loaded" <<<"$out" && grep -q "measure.sh" <<<"$out" &&
  ok "measure.mjs without the counter says how to run it" || bad "measure.mjs without LD_PRELOAD: exit $rc: $out"

# --- Executed order.
mkdir -p "$work/tmp"
order="$(TMPDIR="$work/tmp" node "$ort/exec_order.mjs" "$work/branches.onnx" --dim batch=4 2>&1)"; rc=$?
if [ "$rc" -ne 0 ]; then
  bad "exec_order.mjs branches.onnx exited $rc: $order"
else
  printf '%s\n' "$order" >"$work/branches.order"
  check="$("$py" "$ort/check_exec_order.py" "$work/branches.onnx" "$work/branches.order" --all-nodes)" &&
    ok "branches: $check" || bad "branches: $check"
  listing="$("$py" -c 'import onnx,sys; g=onnx.load(sys.argv[1]).graph
for i,n in enumerate(g.node): print(n.name or f"{n.op_type}_{i}")' "$work/branches.onnx")"
  [ "$order" != "$listing" ] && ok "branches: the executed order is not the listing" ||
    bad "branches: exec_order printed the listing itself"
  # ORT 1.30's default order (tests/ort/README.md): the leaf listed last, y2_sub,
  # is expanded first; among producers the one listed last is visited first.
  expected="c_neg c_exp b_sigmoid y2_sub Abs_4 a_relu a_tanh ab_add y1_mul"
  [ "$(tr '\n' ' ' <<<"$order" | sed 's/ $//')" = "$expected" ] && ok "branches: ORT's depth-first order" ||
    bad "branches: order $(tr '\n' ' ' <<<"$order"), expected $expected"
  # (ORT itself leaves .ses and mat-debug-PID.log in TMPDIR at every session.)
  left="$(find "$work/tmp" -name 'olla-exec-order-*' -o -name '*.json' | tr '\n' ' ')"
  [ -z "$left" ] && ok "no profile file left behind" || bad "left in TMPDIR: $left"
fi
order="$(node "$ort/exec_order.mjs" "$work/matmul_chain.onnx" --dim batch=2 2>&1)"
[ "$(tr '\n' ' ' <<<"$order")" = "matmul1 matmul2 matmul3 matmul4 " ] && ok "matmul_chain: the chain in order" ||
  bad "matmul_chain order: $order"
out="$(node "$ort/exec_order.mjs" "$work/garbage.onnx" 2>&1)"; rc=$?
[ "$rc" -eq 77 ] && ok "exec_order.mjs skips an unloadable model" || bad "exec_order.mjs garbage: exit $rc: $out"

cli_finish "ort harness"
