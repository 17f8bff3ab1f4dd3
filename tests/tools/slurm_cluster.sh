# A one-node Slurm cluster started from a folder, for tests/cli/test_slurm.sh
# and bench/slurm_bench.sh (sourced). Debian's slurm-wlm and munge, started
# as root without systemd: munged with a key of its own, slurmctld and
# slurmd with their configuration, state and logs in DIR; this machine is
# the node (NodeName `hostname -s`, address 127.0.0.1) with its CPUs;
# ProctrackType=proctrack/linuxproc and TaskPlugin=task/none, so no cgroups
# are needed. Ports are chosen free, so clusters of other users of the
# machine do not collide.
#
#   slurm_cluster_missing            prints why no cluster can start here
#                                    (not root, a program missing), or nothing
#   slurm_cluster_start DIR          starts the three daemons in the
#                                    foreground of background jobs, records
#                                    their PIDs in SLURM_CLUSTER_PIDS, exports
#                                    SLURM_CONF, and waits for the node to be
#                                    idle; 1 (and the logs) when it is not
#   slurm_cluster_stop               stops exactly those PIDs (TERM, then
#                                    KILL after 15 s) and waits for them
#   slurm_cluster_logs               the daemons' last log lines

SLURM_CLUSTER_PIDS=""
SLURM_CLUSTER_DIR=""

slurm_cluster_missing() {
  [ "$(id -u)" -eq 0 ] || { echo "Slurm's daemons start as root here, and this is uid $(id -u)"; return; }
  local p
  for p in munged munge slurmctld slurmd sbatch sinfo squeue; do
    command -v "$p" >/dev/null 2>&1 ||
      { echo "$p is not installed (Debian's slurm-wlm and munge: bash scripts/setup.sh --test)"; return; }
  done
}

# Two free TCP ports on 127.0.0.1, one per line.
slurm_free_ports() {
  /usr/bin/python3 - <<'PY'
import socket
socks = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
PY
}

slurm_cluster_logs() {
  local f
  for f in "$SLURM_CLUSTER_DIR"/log/*; do
    [ -s "$f" ] && { echo "== $f"; tail -n 15 "$f"; }
  done
}

slurm_cluster_start() {
  local dir=$1 host cpus ports ctld_port d_port
  SLURM_CLUSTER_DIR=$dir
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" || return 1
  chmod 700 "$dir" "$dir/munge"
  host=$(hostname -s)
  cpus=$(slurmd -C 2>/dev/null | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p')
  [ -n "$cpus" ] || cpus=$(nproc)
  ports=$(slurm_free_ports) || return 1
  ctld_port=$(echo "$ports" | sed -n 1p)
  d_port=$(echo "$ports" | sed -n 2p)
  head -c 1024 /dev/urandom >"$dir/munge/munge.key" && chmod 600 "$dir/munge/munge.key" || return 1
  cat >"$dir/slurm.conf" <<EOF
ClusterName=olla
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MaxArraySize=100001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=olla Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  munged -F --force --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" \
    >"$dir/log/munged.out" 2>&1 &
  SLURM_CLUSTER_PIDS="$!"
  local i
  for i in $(seq 1 100); do [ -S "$dir/munge/socket" ] && break; sleep 0.1; done
  slurmctld -D -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
  SLURM_CLUSTER_PIDS="$SLURM_CLUSTER_PIDS $!"
  slurmd -D -f "$SLURM_CONF" >"$dir/log/slurmd.out" 2>&1 &
  SLURM_CLUSTER_PIDS="$SLURM_CLUSTER_PIDS $!"
  local state=""
  for i in $(seq 1 300); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null)
    [ "$state" = idle ] && return 0
    sleep 0.1
  done
  echo "the Slurm node is '$state' after 30 s, not idle"
  slurm_cluster_logs
  return 1
}

# 1 while the process runs (a zombie, ended but not waited for, does not)
slurm_running() {
  local st
  st=$(ps -o stat= -p "$1" 2>/dev/null)
  [ -n "$st" ] && [ "${st#Z}" = "$st" ]
}

slurm_cluster_stop() {
  local pid i
  [ -n "$SLURM_CLUSTER_PIDS" ] || return 0
  # the daemons in the reverse order of their start: slurmd, slurmctld, munged
  for pid in $(echo "$SLURM_CLUSTER_PIDS" | tr ' ' '\n' | tac); do
    kill -TERM "$pid" 2>/dev/null || continue
    for i in $(seq 1 150); do slurm_running "$pid" || break; sleep 0.1; done
    slurm_running "$pid" && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  SLURM_CLUSTER_PIDS=""
}
