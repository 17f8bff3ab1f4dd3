#!/usr/bin/env bash
# batch --shard K/N on one machine (tests/cli/test_slurm.sh runs it on a
# real scheduler): the N shards of a folder take every model exactly once,
# each the models whose path below IN_DIR has the FNV-1a hash (64 bits,
# computed here in Python) K modulo N, whatever else the folder holds; the
# shards' reports concatenated hold every model, failed ones too; shards
# running at the same time over one OUT_DIR keep their own stamps, so a
# second round finds every model unchanged; a run with another N, or none,
# reads every shard's stamps, and a run without --shard folds them into one
# file. Bad --shard values are usage errors. The default -j follows the CPUs
# the process may use (taskset), not the node's.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
export OLLA_TIME_LIMIT=${OLLA_TIME_LIMIT:-20}
PY=/usr/bin/python3
cli_need_python onnx
cli_tmp

GOOD=30; DAMAGED=3
$PY "$SRC/tests/tools/make_zoo.py" "$tmp/zoo" $GOOD --bad $DAMAGED --seed 3 >/dev/null || { echo "FAIL: make_zoo.py"; exit 1; }
(cd "$tmp/zoo" && find . -name '*.onnx' | sed 's|^\./||' | sort) >"$tmp/models"
# the shard of each model, by the documented hash
shard_of() { # N: "rel K" lines
  $PY -c '
import sys
n = int(sys.argv[1])
for rel in sys.stdin.read().split():
    h = 14695981039346656037
    for b in rel.encode():
        h = ((h ^ b) * 1099511628211) % 2**64
    print(rel, h % n)' "$1" <"$tmp/models"
}
# the models of reports, "rel status" lines, rel below the zoo
statuses() {
  cat "$@" | $PY -c '
import json, sys
root = sys.argv[1] + "/"
for line in sys.stdin:
    r = json.loads(line)
    print(r["model"][len(root):], r["status"])' "$tmp/zoo" | sort
}

# usage errors
for v in 4/4 a/b 0/0 1/ /4 -1/4 1/4x 3 " 1/4" 1/1000001 99999999999999999999/3; do
  "$OLLA" batch --shard "$v" "$tmp/zoo" "$tmp/never" 2>"$tmp/e"; rc=$?
  [ $rc -eq 2 ] && grep -q -- "--shard '$v': needs K/N" "$tmp/e" && [ ! -e "$tmp/never" ] && ok ||
    bad "--shard '$v': exit $rc, $(cat "$tmp/e")"
done
"$OLLA" batch "$tmp/zoo" "$tmp/never" --shard 2>"$tmp/e"; [ $? -eq 2 ] && ok || bad "--shard without a value"
"$OLLA" batch --help | grep -q -- "--shard K/N" && ok || bad "batch --help does not list --shard"

# three shards at once over one OUT_DIR
N=3
for k in 0 1 2; do
  "$OLLA" batch -q -j 1 --shard $k/$N --report "$tmp/r$k.jsonl" "$tmp/zoo" "$tmp/out" 2>"$tmp/t$k" & pids="${pids:-} $!"
done
for p in $pids; do wait "$p"; done
statuses "$tmp"/r?.jsonl >"$tmp/all"
cut -d' ' -f1 "$tmp/all" | cmp -s - "$tmp/models" && ok || bad "the shards' reports do not hold every model once: $(cut -d' ' -f1 "$tmp/all" | diff - "$tmp/models" | head -4)"
[ "$(grep -c ' ok$' "$tmp/all")" -eq $GOOD ] && [ "$(grep -c ' failed$' "$tmp/all")" -eq $DAMAGED ] && ok ||
  bad "statuses: $(cut -d' ' -f2 "$tmp/all" | sort | uniq -c | tr '\n' ' ')"
shard_of $N >"$tmp/want3"
for k in 0 1 2; do
  statuses "$tmp/r$k.jsonl" | cut -d' ' -f1 >"$tmp/got$k"
  awk -v k=$k '$2 == k {print $1}' "$tmp/want3" | cmp -s - "$tmp/got$k" && ok || bad "shard $k/$N took other models than the hash gives"
  [ -f "$tmp/out/.olla-batch-stamps.$k-of-$N" ] && ok || bad "shard $k kept no stamps"
done
[ ! -e "$tmp/out/.olla-batch-stamps" ] && ok || bad "a shard wrote the plain stamps file"
# every output as a plain run writes it
"$OLLA" batch -q -j 2 "$tmp/zoo" "$tmp/plain" 2>/dev/null
diff -rq -x '.olla-batch-stamps*' "$tmp/out" "$tmp/plain" >/dev/null && ok || bad "shard outputs differ from a plain run's"

# a second round at once: every model unchanged, as each shard kept its stamps
pids=""
for k in 0 1 2; do
  "$OLLA" batch -q -j 1 --shard $k/$N --report "$tmp/s$k.jsonl" "$tmp/zoo" "$tmp/out" 2>/dev/null & pids="$pids $!"
done
for p in $pids; do wait "$p"; done
statuses "$tmp"/s?.jsonl >"$tmp/again"
[ "$(grep -c ' unchanged$' "$tmp/again")" -eq $GOOD ] && ok || bad "second round: $(cut -d' ' -f2 "$tmp/again" | sort | uniq -c | tr '\n' ' ')"

# another N reads the 3-shard stamps; a model's shard is its path's, whatever the folder holds
"$OLLA" batch -q --shard 1/2 --report "$tmp/n2.jsonl" "$tmp/zoo" "$tmp/out" 2>/dev/null
statuses "$tmp/n2.jsonl" >"$tmp/n2"
shard_of 2 | awk '$2 == 1 {print $1}' | cmp -s - <(cut -d' ' -f1 "$tmp/n2") && ok || bad "shard 1/2 took other models than the hash gives"
[ "$(grep -c ' ok$' "$tmp/n2")" -eq 0 ] && grep -q ' unchanged$' "$tmp/n2" && ok || bad "--shard 1/2 after 3 shards converted again"
mkdir -p "$tmp/part"
head -n 7 "$tmp/models" | while read -r m; do mkdir -p "$tmp/part/$(dirname "$m")"; cp "$tmp/zoo/$m" "$tmp/part/$m"; done
"$OLLA" batch -q --shard 1/2 --report "$tmp/part.jsonl" "$tmp/part" "$tmp/part_out" 2>/dev/null
cat "$tmp/part.jsonl" | $PY -c '
import json, sys
root = sys.argv[1] + "/"
for line in sys.stdin:
    print(json.loads(line)["model"][len(root):])' "$tmp/part" | sort >"$tmp/part_got"
head -n 7 "$tmp/models" | grep -Fx -f - <(cut -d' ' -f1 "$tmp/n2") | cmp -s - "$tmp/part_got" && ok ||
  bad "a smaller folder's shard 1/2 differs from the full folder's: $(cat "$tmp/part_got")"

# a plain run reads every shard's stamps, then folds them into one file
touch "$tmp/zoo/chain/g1/"*.onnx
"$OLLA" batch --report "$tmp/p.jsonl" "$tmp/zoo" "$tmp/out" 2>"$tmp/tp"
changed=$(ls "$tmp/zoo/chain/g1/"*.onnx | wc -l)
grep -q "$((GOOD + DAMAGED)) models: $changed converted, $((GOOD - changed)) unchanged, $DAMAGED failed" "$tmp/tp" && ok ||
  bad "plain run after the shards: $(tail -1 "$tmp/tp")"
[ -z "$(ls -A "$tmp/out" | grep -e '-of-')" ] && [ "$(wc -l <"$tmp/out/.olla-batch-stamps")" -eq $GOOD ] && ok ||
  bad "stamps not folded: $(ls -A "$tmp/out")"
"$OLLA" batch "$tmp/zoo" "$tmp/out" 2>"$tmp/tq"
grep -q "0 converted, $GOOD unchanged" "$tmp/tq" && ok || bad "after folding: $(tail -1 "$tmp/tq")"

# the default -j: half the CPUs this process may use, at least 1
cpus=$($PY -c 'import os; print(len(os.sched_getaffinity(0)))')
want=$((cpus / 2)); [ $want -lt 1 ] && want=1
"$OLLA" batch -v "$tmp/part" "$tmp/part_out" 2>"$tmp/tv"
grep -q "olla-onnx batch: 7 models, $want at a time ($cpus CPU" "$tmp/tv" && ok || bad "default -j: $(head -1 "$tmp/tv")"
if command -v taskset >/dev/null; then
  taskset -c 0 "$OLLA" batch -v --shard 0/1 "$tmp/part" "$tmp/part_out" 2>"$tmp/tv1"
  grep -q "olla-onnx batch: 7 models in shard 0/1, 1 at a time (1 CPU this process may use)" "$tmp/tv1" && ok ||
    bad "under taskset -c 0: $(head -1 "$tmp/tv1")"
else
  cli_missing "the CPU-count check needs taskset (util-linux)"
fi
cli_finish "batch shard"
