#!/usr/bin/env bash
# A single-node Slurm cluster for tests, from Debian's slurm-wlm and munge:
# munged, slurmctld and slurmd started by this script as root, with every
# key, socket, state, spool, log and pid file in one folder, on 127.0.0.1
# only (CommunicationParameters=NoInAddrAny) and free ports. The node offers
# 8 CPUs whatever the machine has (SlurmdParameters=config_overrides), and
# 4 GPUs that are not there (gres/gpu on /dev/loop0-3: Slurm allocates them
# and sets each task's CUDA_VISIBLE_DEVICES; nothing opens them).
#
#   slurm_cluster.sh up DIR     # prints the SLURM_CONF to export
#   slurm_cluster.sh down DIR   # ends the three daemons (by their pid files)
set -euo pipefail
cmd="${1:?usage: slurm_cluster.sh up|down DIR}"
dir="$(realpath -m "${2:?usage: slurm_cluster.sh up|down DIR}")"

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Ends the daemon whose pid file is $1: SIGTERM, then SIGKILL after 10 s.
stop_daemon() {
  local pidfile="$1" pid
  [ -s "$pidfile" ] || return 0
  pid="$(cat "$pidfile")"
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

case "$cmd" in
  down)
    # Jobs first, so slurmd does not leave their processes behind.
    if [ -f "$dir/slurm.conf" ] && [ -s "$dir/slurmctld.pid" ]; then
      SLURM_CONF="$dir/slurm.conf" scancel --full --quiet --user root 2>/dev/null || true
      sleep 1
    fi
    stop_daemon "$dir/slurmd.pid"
    stop_daemon "$dir/slurmctld.pid"
    stop_daemon "$dir/munged.pid"
    exit 0 ;;
  up) ;;
  *) echo "usage: slurm_cluster.sh up|down DIR" >&2; exit 2 ;;
esac

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
# As root munged refuses to run without --force.
munged --force --key-file="$dir/munge/munge.key" \
  --socket="$dir/munge/munge.socket" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed"

cat > "$dir/slurm.conf" <<CONF
ClusterName=lockstep-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
GresTypes=gpu
ReturnToService=2
JobRequeue=1
KillWait=30
MinJobAge=600
SchedulerParameters=defer,bf_interval=1
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 RealMemory=8000 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
echo "NodeName=localhost Name=gpu File=/dev/loop[0-3]" > "$dir/gres.conf"
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N localhost
for _ in $(seq 150); do
  if sinfo --noheader -o '%T' 2>/dev/null | grep -qx 'idle'; then
    echo "$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "slurm_cluster.sh: the node did not come up; logs in $dir" >&2
tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
exit 1
