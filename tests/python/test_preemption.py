"""A Python (PyTorch) worker under a cluster engine's SIGTERM: terminated
with the rest of its job it exits lockstep.EXIT_PREEMPTED (75) once the
coordinator's preemption round is durable; terminated alone it leaves the
job, exits with the same code (so an engine replaces it), and the job
finishes without it."""
import os
import signal
import subprocess
import tempfile
import time

from conftest import SOURCE
import lockstep
from lockstep.cluster import bin_dir

BIN = bin_dir()

PYTHON = "/usr/bin/python3"
JOB = ["--servers", "1", "--workers", "2", "--evaluators", "0",
       "--model", "mlp:16", "--batch", "32", "--optimizer", "momentum",
       "--lr", "0.05", "--train-limit", "3000", "--test-limit", "500",
       "--eval-every", "0", "--heartbeat-ms", "200"]


def start_job(clocks, workdir):
    coordinator = subprocess.Popen(
        [os.path.join(BIN, "lockstep-coordinator"), "--listen",
         "tcp://127.0.0.1:0", "--clocks", str(clocks), "--run-dir", workdir,
         "--snapshot-dir", os.path.join(workdir, "rounds"), *JOB],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    endpoint = None
    while endpoint is None:
        line = coordinator.stdout.readline()
        assert line, "the coordinator ended before printing its endpoint"
        if line.startswith("@endpoint "):
            endpoint = line.split()[1]
    server = subprocess.Popen(
        [os.path.join(BIN, "lockstep-server"), "--coordinator", endpoint,
         "--rank", "0", "--listen", "tcp://127.0.0.1:0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = [subprocess.Popen(
        [PYTHON, os.path.join(SOURCE, "tests/python/mlp_worker.py"),
         "--coordinator", endpoint, "--rank", str(r)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for r in range(2)]
    return coordinator, server, workers


def await_clocks(workdir, clocks):
    path = os.path.join(workdir, "metrics.jsonl")
    deadline = time.time() + 120
    while time.time() < deadline:
        if os.path.exists(path) and sum(1 for _ in open(path)) >= 2 * clocks:
            return
        time.sleep(0.1)
    raise AssertionError(f"fewer than {clocks} clocks in 120 s")


def stop(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def test_a_terminated_job_exits_resumable_from_python_workers():
    workdir = tempfile.mkdtemp(prefix="lockstep-py-preempt.")
    coordinator, server, workers = start_job(100000, workdir)
    procs = [coordinator, server, *workers]
    try:
        await_clocks(workdir, 20)
        for p in procs:
            p.send_signal(signal.SIGTERM)
        codes = [p.wait(timeout=60) for p in procs]
        out = coordinator.stdout.read()
        assert codes == [75, 75, 75, 75], (codes, out[-2000:])
        assert "is durable; the job resumes from it" in out, out[-2000:]
    finally:
        stop(procs)


def test_a_python_worker_terminated_alone_leaves():
    workdir = tempfile.mkdtemp(prefix="lockstep-py-leave.")
    coordinator, server, workers = start_job(400, workdir)
    procs = [coordinator, server, *workers]
    try:
        await_clocks(workdir, 20)
        workers[1].send_signal(signal.SIGTERM)
        # Let go while the job goes on: the preempted code, so an engine
        # replaces it (the replacement rejoins at the current clock).
        assert workers[1].wait(timeout=60) == lockstep.EXIT_PREEMPTED, \
            workers[1].stdout.read()
        assert coordinator.wait(timeout=120) == 0
        assert workers[0].wait(timeout=30) == 0
    finally:
        stop(procs)
