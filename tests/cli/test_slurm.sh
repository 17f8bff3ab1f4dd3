#!/usr/bin/env bash
# batch --shard on a real scheduler: a one-node Slurm cluster (munged,
# slurmctld, slurmd from tests/tools/slurm_cluster.sh, configuration in a
# temporary folder) converts a folder of generated models, some of them
# damaged, with a 4-task job array, `sbatch --array=0-3 --wait`, one shard
# per task. Every model is in exactly one task's report (failed ones too),
# the outputs are the bytes a plain batch on this machine writes, each shard
# kept its own stamps, and a second array run reports every good model
# unchanged. A plain run afterwards folds the shards' stamps into one file.
# Every daemon started is stopped by its PID. Skipped (77) only where Slurm
# cannot run: not root, or slurm-wlm or munge not installed.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=$(realpath "${OLLA:?}") ; SRC=${OLLA_SOURCE_DIR:?}  # the tasks run in another folder
export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-20}
PY=/usr/bin/python3
. "$SRC/tests/tools/slurm_cluster.sh"
why=$(slurm_cluster_missing)
[ -z "$why" ] || cli_skip "no Slurm cluster can start here: $why"
cli_need_python onnx
cli_tmp
cli_on_exit 'slurm_cluster_stop'

GOOD=24; DAMAGED=2
$PY "$SRC/tests/tools/make_zoo.py" "$tmp/zoo" $GOOD --bad $DAMAGED --seed 7 >/dev/null || { echo "FAIL: make_zoo.py"; exit 1; }
(cd "$tmp/zoo" && find . -name '*.onnx' | sed 's|^\./||' | sort) >"$tmp/models"
[ "$(wc -l <"$tmp/models")" -eq $((GOOD + DAMAGED)) ] || { echo "FAIL: the zoo has $(wc -l <"$tmp/models") models"; exit 1; }

slurm_cluster_start "$tmp/slurm" || { echo "FAIL: the Slurm cluster did not start"; exit 1; }
ok

# array RUN: one 4-task job array over the zoo, reports in $tmp/RUN.K.jsonl
array() {
  local run=$1
  timeout 300 sbatch --array=0-3 --wait --chdir="$tmp" -o "$tmp/slurm/log/$run.%a.out" -J "olla-$run" --wrap \
    "'$OLLA' batch -q --shard \$SLURM_ARRAY_TASK_ID/\$SLURM_ARRAY_TASK_COUNT --report '$tmp/$run.'\$SLURM_ARRAY_TASK_ID.jsonl '$tmp/zoo' '$tmp/out'" \
    >"$tmp/$run.sbatch" 2>&1
}
# field FILE... : "model status" per report line, the model below the zoo
statuses() {
  cat "$@" 2>/dev/null | $PY -c '
import json, sys
root = sys.argv[1].rstrip("/") + "/"
for line in sys.stdin:
    r = json.loads(line)
    m = r.get("model", "")
    print(m[len(root):] if m.startswith(root) else m, r.get("status"))' "$tmp/zoo"
}

array first; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] && ok || { bad "first array: sbatch exit $rc: $(cat "$tmp/first.sbatch")"; slurm_cluster_logs; }
for k in 0 1 2 3; do
  [ -f "$tmp/first.$k.jsonl" ] && ok || bad "task $k wrote no report: $(cat "$tmp/slurm/log/first.$k.out" 2>&1)"
  [ -f "$tmp/out/.olla-batch-stamps.$k-of-4" ] && ok || bad "task $k kept no stamps of its own"
done
statuses "$tmp"/first.*.jsonl >"$tmp/first.status"
cut -d' ' -f1 "$tmp/first.status" | sort >"$tmp/first.models"
# every model converted exactly once across the merged reports, failed ones included
if cmp -s "$tmp/models" "$tmp/first.models"; then ok; else
  bad "models in the merged reports differ from the zoo's (once each): $(diff "$tmp/models" "$tmp/first.models" | head -5)"
fi
[ "$(grep -c ' ok$' "$tmp/first.status")" -eq $GOOD ] && ok || bad "wanted $GOOD ok: $(grep -v ' ok$' "$tmp/first.status")"
[ "$(grep '^damaged/' "$tmp/first.status" | grep -c ' failed$')" -eq $DAMAGED ] && ok || bad "the damaged models are not failed"
# several tasks did the work (the shards split the folder)
busy=0
for k in 0 1 2 3; do [ -s "$tmp/first.$k.jsonl" ] && busy=$((busy + 1)); done
[ $busy -ge 3 ] && ok || bad "only $busy of 4 tasks had models"
# the outputs are those of a plain batch on this machine, byte for byte
"$OLLA" batch -q -j 2 "$tmp/zoo" "$tmp/local" 2>/dev/null
same=0
while read -r m; do
  case $m in damaged/*) continue ;; esac
  cmp -s "$tmp/out/$m" "$tmp/local/$m" && same=$((same + 1))
done <"$tmp/models"
[ $same -eq $GOOD ] && ok || bad "$same of $GOOD outputs equal the plain batch's"

# a second array run finds everything unchanged
array second; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] && ok || bad "second array: sbatch exit $rc: $(cat "$tmp/second.sbatch")"
statuses "$tmp"/second.*.jsonl >"$tmp/second.status"
[ "$(grep -c ' unchanged$' "$tmp/second.status")" -eq $GOOD ] && [ "$(wc -l <"$tmp/second.status")" -eq $((GOOD + DAMAGED)) ] &&
  ok || bad "second run: $(cut -d' ' -f2 "$tmp/second.status" | sort | uniq -c | tr '\n' ' ')"

# a plain run reads the shards' stamps, and folds them into one file
"$OLLA" batch --report "$tmp/plain.jsonl" "$tmp/zoo" "$tmp/out" 2>"$tmp/plain.err"
grep -q "$((GOOD + DAMAGED)) models: 0 converted, $GOOD unchanged, $DAMAGED failed" "$tmp/plain.err" && ok ||
  bad "plain run after the array: $(tail -1 "$tmp/plain.err")"
[ -f "$tmp/out/.olla-batch-stamps" ] && [ -z "$(ls -A "$tmp/out" | grep -- '-of-')" ] &&
  [ "$(wc -l <"$tmp/out/.olla-batch-stamps")" -eq $GOOD ] && ok || bad "stamps after folding: $(ls -A "$tmp/out")"

# every daemon stopped, by the PIDs it was started with
pids=$SLURM_CLUSTER_PIDS
slurm_cluster_stop
left=""
for p in $pids; do slurm_running "$p" && left="$left $p"; done
[ -z "$left" ] && ok || bad "daemons still running: $left"
cli_finish "slurm"
