#!/usr/bin/env bash
# Start a throw-away one-node SLURM cluster on 127.0.0.1 for the cluster tests and export where it is.
#
#   source scripts/ci_slurm.sh           # exports SLURM_CONF and FYEXP_TEST_SLURM (and prints the export lines)
#   bash scripts/ci_slurm.sh stop        # stops the daemons started from the same state folder, removes it, and
#                                        # says which it stopped and that none is left (else it returns 1)
#
# Installs Debian's `slurm-wlm` and `munge` (apt-get) when `slurmctld` is absent, writes a `slurm.conf` for this
# machine (its cores and memory as `slurmd -C` reports them, one partition `ci`), with process tracking that needs
# no cgroups (proctrack/linuxproc, task/none) and no accounting (no slurmdbd: `sacct` does not answer, fyexp
# watches jobs with `squeue`, fyexp/run/executors.py), starts `munged`, `slurmctld` and `slurmd` as root (what a
# container allows), and waits until `sinfo` shows the node idle.  State, logs and the configuration live in
# $FYEXP_SLURM_DIR (default /tmp/fyexp-ci-slurm); ports $FYEXP_SLURM_PORT and the next one (default 56817).
# Sourced or run, it never exits the calling shell on failure: it says why on stderr and returns 1.
_fyexp_slurm() {
  local dir=${FYEXP_SLURM_DIR:-/tmp/fyexp-ci-slurm} port=${FYEXP_SLURM_PORT:-56817} node host
  if [[ ${1:-} == stop ]]; then
    _fyexp_slurm_stop "$dir" report; return
  fi
  local t0=$SECONDS
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    command -v apt-get >/dev/null || { echo "ci_slurm: no SLURM and no apt-get" >&2; return 1; }
    [[ $(id -u) == 0 ]] || { echo "ci_slurm: no SLURM, and installing it needs root" >&2; return 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 || {
      apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null; } ||
      { echo "ci_slurm: apt-get install slurm-wlm munge failed" >&2; return 1; }
    echo "ci_slurm: installed slurm-wlm and munge in $((SECONDS - t0)) s" >&2; t0=$SECONDS
  fi
  [[ $(id -u) == 0 ]] || { echo "ci_slurm: slurmd must start as root (it switches to the job's user)" >&2; return 1; }
  export SLURM_CONF=$dir/slurm.conf
  if [[ -f $dir/slurmctld.pid && -f $dir/slurmd.pid ]] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null &&
     kill -0 "$(cat "$dir/slurmd.pid")" 2>/dev/null; then
    :  # already running
  else
    _fyexp_slurm_stop "$dir"
    mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
    # munged: Debian's key (created by the package), a socket of our own so that a system munged is left alone
    [[ -s /etc/munge/munge.key ]] || { mungekey --create --keyfile=/etc/munge/munge.key >/dev/null 2>&1 ||
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null; }
    chown munge: /etc/munge/munge.key 2>/dev/null; chmod 400 /etc/munge/munge.key
    chown munge: "$dir/munge"; chmod 711 "$dir/munge"
    runuser -u munge -- munged --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
      --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
      { echo "ci_slurm: munged did not start (see $dir/munge/munged.log)" >&2; return 1; }
    host=$(hostname -s)
    node=$(slurmd -C 2>/dev/null | head -1)  # NodeName=HOST CPUs=... RealMemory=... as slurmd sees this machine
    [[ $node == NodeName=* ]] || { echo "ci_slurm: slurmd -C did not describe this machine" >&2; return 1; }
    cat >"$SLURM_CONF" <<EOF
# written by scripts/ci_slurm.sh: a one-node throw-away cluster
ClusterName=fyexp-ci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=5
InactiveLimit=0
MinJobAge=30
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    sed -i "s/ UpTime=[^ ]*//" "$SLURM_CONF"
    slurmctld -f "$SLURM_CONF" -i || { echo "ci_slurm: slurmctld did not start (see $dir/slurmctld.log)" >&2; return 1; }
    slurmd -f "$SLURM_CONF" || { echo "ci_slurm: slurmd did not start (see $dir/slurmd.log)" >&2; return 1; }
    local waited=0
    until [[ $(sinfo -h -N -o %t 2>/dev/null) == idle ]]; do
      if (( waited >= 60 )); then
        echo "ci_slurm: the node is not idle after 60 s (sinfo: $(sinfo -h -N -o '%t %E' 2>&1 | head -1); see $dir)" >&2
        return 1
      fi
      sleep 1; waited=$((waited + 1))
    done
    echo "ci_slurm: munged, slurmctld and slurmd started, node $host idle, in $((SECONDS - t0)) s" >&2
  fi
  export FYEXP_TEST_SLURM=$dir
  echo "export SLURM_CONF=$SLURM_CONF"
  echo "export FYEXP_TEST_SLURM=$FYEXP_TEST_SLURM"
}
_fyexp_slurm_stop() {  # the daemons this state folder started (by their pid files), then the folder; with
  # `report`, one line saying what it stopped and whether any of them (or a job's slurmstepd) is still running (1)
  local dir=$1 pidfile pid stopped=() left=()
  if [[ -f $dir/slurm.conf && -f $dir/slurmctld.pid ]] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    SLURM_CONF=$dir/slurm.conf scancel --user="$(id -un)" 2>/dev/null  # no job step outlives the cluster
    for _ in $(seq 30); do [[ -z $(SLURM_CONF=$dir/slurm.conf squeue -h 2>/dev/null) ]] && break; sleep 0.5; done
  fi
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [[ -f $pidfile ]] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
    sleep 0.2
    if kill -0 "$pid" 2>/dev/null; then left+=("$(basename "$pidfile" .pid) $pid"); else
      stopped+=("$(basename "$pidfile" .pid) $pid"); fi
  done
  rm -rf "$dir"
  [[ ${2:-} == report ]] || return 0
  pid=$(pgrep -x slurmstepd | tr '\n' ' ')
  [[ -n $pid ]] && left+=("slurmstepd $pid")
  echo "ci_slurm: stopped ${stopped[*]:-nothing (no daemon was running)}${stopped[*]:+ (pids)}; still running:" \
    "${left[*]:-none}"
  (( ${#left[@]} == 0 ))
}
_fyexp_slurm "$@"
