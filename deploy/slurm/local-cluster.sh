#!/bin/bash
# A one-node Slurm cluster on this machine, to try the scripts before a real cluster (and for
# train/tests/deploy.rs, which runs them on it): munged, slurmctld and slurmd, with their
# config, state, logs and socket under DIR and ports of their own (16817, 16818). Needs root
# (slurmd starts jobs) and Debian's packages: apt-get install slurm-wlm munge.
#
#   deploy/slurm/local-cluster.sh start DIR   # then: export SLURM_CONF=DIR/slurm.conf
#   deploy/slurm/local-cluster.sh stop DIR
set -euo pipefail
cmd=${1:-}
DIR=$(realpath -m "${2:-}")
if [ -z "$cmd" ] || [ -z "${2:-}" ]; then
  sed -n '2,8p' "$0" >&2
  exit 2
fi
stop() {
  for pid in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" "$DIR/munge/munged.pid"; do
    if [ -f "$pid" ]; then kill "$(cat "$pid")" 2>/dev/null || true; fi
  done
}
case $cmd in
start)
  mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool" "$DIR/log"
  chmod 700 "$DIR/munge"
  if [ ! -f "$DIR/munge/munge.key" ]; then
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  fi
  chmod 600 "$DIR/munge/munge.key"
  # --force: munged refuses root and shared directories without it; this cluster is one
  # machine's test bed.
  munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.sock" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
    --seed-file="$DIR/munge/munged.seed"
  host=$(hostname)
  cpus=$(nproc)
  memory=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 2048))
  cat > "$DIR/slurm.conf" <<EOF
ClusterName=lifeline-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
# No cgroups in a container: processes are tracked through /proc.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
# Up to 4 jobs share a core: the roles of a tiny run fit on a 2-core machine.
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
  export SLURM_CONF="$DIR/slurm.conf"
  slurmctld -i
  slurmd
  for _ in $(seq 100); do
    if sinfo -h -o %t 2>/dev/null | grep -q idle; then
      echo "export SLURM_CONF=$DIR/slurm.conf"
      exit 0
    fi
    sleep 0.2
  done
  echo "the node did not come up; see $DIR/log" >&2
  stop
  exit 1
  ;;
stop) stop ;;
*)
  echo "unknown command $cmd (start or stop)" >&2
  exit 2
  ;;
esac
