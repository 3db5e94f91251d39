#!/usr/bin/env bash
# How the shipped sbatch script places a job, on a real single-node Slurm
# cluster (slurm_cluster.sh, with 4 GPUs Slurm allocates but nobody opens),
# with stand-in binaries that log what each task got and exit as told:
#  - the installed layout: the binaries found on PATH alone (no
#    LOCKSTEP_BIN), the installed Python module on PYTHONPATH, and a clear
#    word when they are not there (not `lockstep-keys: command not found`);
#  - GPUs for the workers only (LOCKSTEP_WORKER_GPUS=1: one each, the
#    coordinator and servers none), a Python worker command, each task
#    given the job's --cpus-per-task, a time limit of the script's own;
#  - the script's own requeue after a preemption capped
#    (LOCKSTEP_MAX_REQUEUES).
#   slurm_script_test.sh SOURCE_DIR
set -euo pipefail
src="$(realpath "$1")"
work="$(mktemp -d /tmp/lockstep-sbatch.XXXXXX)"
cleanup() {
  "$src/tests/deploy/slurm/slurm_cluster.sh" down "$work/cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.out "$work"/tasks.log; do [ -f "$f" ] && { echo "== $f"; tail -n 20 "$f"; }; done >&2
  exit 1
}
wait_for() {
  local limit="$1"; shift
  for _ in $(seq $((limit * 5))); do
    if "$@"; then return 0; fi
    sleep 0.2
  done
  return 1
}

# The stand-ins: PREFIX/bin/lockstep-* as cmake --install lays them out.
prefix="$work/prefix"
mkdir -p "$prefix/bin" "$prefix/python"
cat > "$prefix/bin/lockstep-keys" <<'STUB'
#!/bin/sh
# lockstep-keys --out DIR ...
mkdir -p "$2" && touch "$2/admin.key"
STUB
for role in lockstep-coordinator lockstep-server lockstep-worker train.py; do
  cat > "$prefix/bin/$role" <<STUB
#!/bin/sh
echo "\$(basename "\$0") \$* gpus=[\${CUDA_VISIBLE_DEVICES:-}] cpus=\${SLURM_CPUS_PER_TASK:-} pythonpath=\${PYTHONPATH:-}" >> "$work/tasks.log"
exit "\${STUB_EXIT:-0}"
STUB
done
chmod +x "$prefix/bin/"*
script="$src/deploy/slurm/lockstep.sbatch"

export SLURM_CONF="$("$src/tests/deploy/slurm/slurm_cluster.sh" up "$work/cluster")"
cd "$work"
state() { squeue --noheader --jobs "$1" --format %T 2>/dev/null || true; }
finished() { [ -z "$(state "$1")" ]; }
field() { scontrol show job "$1" | grep -o "$2=[^ ]*" | head -1 | cut -d= -f2; }

# 1. GPU workers from the installed layout, on PATH alone.
job="$(PATH="$prefix/bin:$PATH" LOCKSTEP_WORKER_GPUS=1 LOCKSTEP_WORKER_CMD="train.py" \
  LOCKSTEP_WORKER_FLAGS="--device cuda" sbatch --parsable --ntasks=7 \
  --cpus-per-task=1 --gpus=4 "$script" --model mlp:16)"
wait_for 60 finished "$job" || fail "job $job did not finish"
[ "$(field "$job" JobState)" = COMPLETED ] || fail "job $job ended $(field "$job" JobState)"
[ "$(field "$job" TimeLimit)" = "1-00:00:00" ] || fail "job $job has time limit $(field "$job" TimeLimit), not the script's"
log="$work/tasks.log"
[ "$(grep -c '^lockstep-coordinator .*--model mlp:16 gpus=\[\]' "$log")" = 1 ] || fail "the coordinator did not run once without a GPU"
[ "$(grep -c '^lockstep-server --rank [01] gpus=\[\]' "$log")" = 2 ] || fail "the servers did not run without GPUs"
[ "$(grep -c '^train.py --rank [0-3] --device cuda gpus=\[[0-3]\]' "$log")" = 4 ] || fail "the 4 workers did not run train.py on a GPU each"
[ "$(grep '^train.py' "$log" | grep -o 'gpus=\[[0-9]\]' | sort -u | wc -l)" = 4 ] || fail "two workers share a GPU"
[ "$(grep '^train.py' "$log" | grep -o -- '--rank [0-9]' | sort -u | wc -l)" = 4 ] || fail "two workers share a rank"
grep -q "^lockstep-worker" "$log" && fail "a C++ worker ran in place of LOCKSTEP_WORKER_CMD"
[ "$(grep -c "cpus=1 pythonpath=$prefix/python" "$log")" = 7 ] || fail "a task lacks the job's cpus per task or the installed Python module"

# 2. Without the binaries on PATH, the job says what to do.
job="$(env -u LOCKSTEP_BIN sbatch --parsable --ntasks=4 "$script")"
wait_for 60 finished "$job" || fail "job $job did not finish"
grep -q "lockstep-keys not found: install Lockstep (cmake --install build --prefix PREFIX)" "lockstep-$job.out" ||
  fail "no word on how to install: $(cat "lockstep-$job.out")"

# 3. Preempted (every task exits 75) with no requeues left: not requeued.
job="$(PATH="$prefix/bin:$PATH" STUB_EXIT=75 LOCKSTEP_MAX_REQUEUES=0 sbatch --parsable --ntasks=4 "$script")"
wait_for 60 finished "$job" || fail "job $job was requeued past LOCKSTEP_MAX_REQUEUES=0"
[ "$(field "$job" Restarts)" = 0 ] || fail "job $job was restarted"
grep -q "not requeueing job $job" "lockstep-$job.out" || fail "the script did not say why it stops"
echo "PASS: binaries from PATH (installed layout), GPUs to the 4 workers only (one each)," \
     "Python worker command, --cpus-per-task on every task, the script's time limit;" \
     "no binaries: told how to install; requeue cap held"
