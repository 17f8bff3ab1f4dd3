#!/usr/bin/env bash
# The scheduling ILP alone (bench/sched_bench -i, CBC in its child process)
# on small DAG files, on the machine as it is and beside 2 and 4 busy loops:
# the ILP's order (a hash), its peak and CBC's proven bound must not change
# with the load when CBC's time limit counts CPU seconds; only the wall time
# may. DAG files come from bench/onnx_to_dag.py.
#
#   bench/ilp_load_bench.sh SCHED_BENCH SECONDS DAG...
#   (SCHED_BENCH: built by bench/build_sched_bench.sh)
set -u
bench=${1:?usage: ilp_load_bench.sh SCHED_BENCH SECONDS DAG...}
secs=${2:?usage: ilp_load_bench.sh SCHED_BENCH SECONDS DAG...}
shift 2
busy=()
stop_busy() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done; busy=(); }
trap stop_busy EXIT
echo "| busy loops | load at start | model | nodes | columns | rows | input-order peak | ILP peak | ILP bound | proven | order hash | wall s | cpu s |"
echo "|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|"
for loops in 0 2 4; do
  for _ in $(seq 1 "$loops"); do yes >/dev/null & busy+=($!); done
  [ "$loops" -gt 0 ] && sleep 1
  for d in "$@"; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    t=$(mktemp)
    row=$( { /usr/bin/time -f "%U %S" -o "$t" "$bench" -i -t "$secs" "$d"; } | tail -1)
    cpu=$(awk '{printf "%.2f", $1 + $2}' "$t")
    rm -f "$t"
    echo "| $loops | $load | ${row#| } $cpu |"
  done
  stop_busy
done
