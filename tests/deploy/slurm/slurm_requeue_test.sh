#!/usr/bin/env bash
# The shipped sbatch script on a real single-node Slurm cluster
# (slurm_cluster.sh): an LB-BSP job on Fashion-MNIST, requeued mid-job with
# `scontrol requeue` (SIGTERM to every task), ends resumable - every task
# exits 75 after a snapshot round of the newest commit - and the requeued
# job resumes from that round by itself and trains to the target. Its
# keys seal every data-plane record (LOCKSTEP_DATA_PLANE=aead). It runs as
# docs/deployment.md says: from the installed layout (cmake --install to a
# prefix of its own), PREFIX/bin on PATH and no LOCKSTEP_BIN.
#   slurm_requeue_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$(realpath "$1")"
build="$(realpath "$2")"
target=0.85
work="$(mktemp -d /tmp/lockstep-slurm.XXXXXX)"
cleanup() {
  "$src/tests/deploy/slurm/slurm_cluster.sh" down "$work/cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT
out=""
fail() {
  echo "FAIL: $*" >&2
  [ -n "$out" ] && [ -f "$out" ] && grep -v "@progress" "$out" | tail -40 >&2
  tail -n 15 "$work/cluster/slurmctld.log" "$work/cluster/slurmd.log" >&2 || true
  exit 1
}
# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
  local limit="$1"; shift
  for _ in $(seq $((limit * 5))); do
    if "$@"; then return 0; fi
    sleep 0.2
  done
  return 1
}

cmake --install "$build" --prefix "$work/prefix" >/dev/null || fail "cmake --install failed"
script="$work/prefix/share/lockstep/deploy/slurm/lockstep.sbatch"
[ -x "$script" ] || fail "the installed layout has no $script"
export SLURM_CONF="$("$src/tests/deploy/slurm/slurm_cluster.sh" up "$work/cluster")"
cd "$work"
# The keys the script makes seal every data-plane record (aead).
job="$(env -u LOCKSTEP_BIN PATH="$work/prefix/bin:$PATH" LOCKSTEP_BIND_HOST=127.0.0.1 \
  LOCKSTEP_DATA_PLANE=aead sbatch --parsable --ntasks=7 "$script" --sync lbbsp \
  --model mlp:256,128 --data fashion-mnist --batch 32 --optimizer momentum \
  --lr 0.05 --epochs 4 --lr-schedule cosine --eval-every 0)"
out="$work/lockstep-$job.out"
run="$work/lockstep-$job/run"
echo "submitted job $job"

# Requeued once 300 clocks ran (4 workers report each clock).
trained() { [ -f "$run/metrics.jsonl" ] && [ "$(wc -l < "$run/metrics.jsonl")" -ge 1200 ]; }
wait_for 300 trained || fail "the job did not train 300 clocks"
requeued_at="$(date +%s.%N)"
scontrol requeue "$job"
state() { squeue --noheader --jobs "$job" --format %T 2>/dev/null || true; }
pending() { [ "$(state)" = PENDING ]; }
gone() { [ -z "$(state)" ]; }
wait_for 60 pending || fail "job $job was not requeued"
preempted_lines="$(wc -l < "$run/metrics.jsonl")"
# Slurm holds a requeued job for about two minutes (its BeginTime); a
# cluster's scheduler would start it then, the test 5 s from now (at once,
# slurmd may still hold the job as killed and refuse its batch script:
# "Job 1 already killed, do not launch batch job").
scontrol update JobId="$job" StartTime=now+5
wait_for 240 gone || fail "the requeued job did not finish"
scontrol show job "$job" | grep -q "JobState=COMPLETED" ||
  fail "job $job ended $(scontrol show job "$job" | grep -o 'JobState=[A-Z_]*')"
scontrol show job "$job" | grep -q "Restarts=1" || fail "job $job was not restarted once"

grep -q "data-plane aead" "$work/lockstep-$job/keys/worker.key" ||
  fail "the job's keys do not seal the data plane"
grep -q "data plane: aead (every record sealed" "$out" ||
  fail "no server said it seals its data plane"

# The preempted run: a round of the newest commit, every task exits 75.
round_line="$(grep -m1 -o 'snapshot round [0-9]* (clock [0-9]*) is durable' "$out")" ||
  fail "no durable preemption round"
round_clock="$(echo "$round_line" | sed 's/.*(clock \([0-9]*\)).*/\1/')"
# Every task heard how the job ended (the roles exit 75 on that word) ...
first_run="$(sed -n '1,/(start 2)/p' "$out")"
for task in 0 1 2 3 4 5 6; do
  echo "$first_run" | grep -q "^$task: .*job preempted (.*is durable" ||
    fail "task $task was not told the job was preempted"
done
# ... and srun saw no task exit any other way.
exits="$(echo "$first_run" | grep -E "srun: error: .*(Exited with exit code|Killed|Terminated)" || true)"
echo "$exits" | grep -q "Exited with exit code 75" ||
  fail "srun reported no task exiting 75: $exits"
if echo "$exits" | grep -v "Exited with exit code 75" | grep -q .; then
  fail "a task did not exit 75: $exits"
fi
# The requeued run resumes right after it.
grep -q "resuming from snapshot round [0-9]* at clock $((round_clock + 1))" "$out" ||
  fail "the requeued job did not resume from clock $((round_clock + 1))"
resumed_ms="$(grep -m1 'resuming from snapshot round' "$out" |
  sed 's/^0: \([0-9T:.-]*\)Z.*/\1/')"
# Clocks the preempted run reported beyond its round (commits after it: a
# preempted job commits nothing more, so at most one clock a worker had
# reported before the signal and that never committed).
beyond="$(head -n "$preempted_lines" "$run/metrics.jsonl" | /usr/bin/python3 -c '
import json, sys
cut = int(sys.argv[1])
print(len({json.loads(l)["clock"] for l in sys.stdin} - set(range(cut + 1))))
' "$round_clock")"
[ "$beyond" -le 1 ] || fail "$beyond clocks reported beyond the round"
accuracy="$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["test_accuracy"])' "$run/summary.json")"
/usr/bin/python3 -c "import sys; sys.exit(0 if $accuracy >= $target else 1)" ||
  fail "test accuracy $accuracy is below $target"
restarted="$(grep -m1 -o "lockstep.sbatch: [0-9T:.-]*Z job $job (start 2)" "$out" |
  cut -d' ' -f2 | tr -d Z)"
[ -n "$restarted" ] || fail "no second start of the batch script"
since() {
  /usr/bin/python3 -c "
import datetime, sys
t = datetime.datetime.fromisoformat(sys.argv[1]).replace(tzinfo=datetime.timezone.utc)
print(round(t.timestamp() - float(sys.argv[2]), 1))" "$@"
}
start_s="$(/usr/bin/python3 -c "
import datetime, sys
t = datetime.datetime.fromisoformat(sys.argv[1]).replace(tzinfo=datetime.timezone.utc)
print(t.timestamp())" "$restarted")"
resume_s="$(since "$resumed_ms" "$start_s")"
requeue_s="$(since "$resumed_ms" "$requeued_at")"
echo "PASS: requeued at clock ~$round_clock; round $round_line; clocks reported" \
     "beyond it: $beyond (never committed); training resumed ${resume_s} s after" \
     "the requeued job started (${requeue_s} s after \`scontrol requeue\`, Slurm's" \
     "hold cut to 5 s and its scheduling pass included); final test accuracy" \
     "$accuracy"
