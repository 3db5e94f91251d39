#!/usr/bin/python3
"""Push and pull from Python (the lockstep module) against the same calls
from C++ (WorkerSession, in lockstep-bench-client), in the same run: for
values of 4 KiB, 1 MiB and 64 MiB, each client joins a fresh one-worker ASP
job (no commit waits) over TCP loopback and runs its clocks; a run's figure
is its median pull and push time. Runs alternate C++, Python, C++, ...
(five each) and each client's figure is the median of its runs: on a busy
2-core machine one run can differ from the next by 30%.

Usage: bench/client/client_bench.py [--smoke]   (PYTHONPATH=build/python)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import lockstep
from lockstep.cluster import LocalCluster, bin_dir, make_keys

SIZES = [("4 KiB", 1 << 10, 3000), ("1 MiB", 1 << 18, 400),
         ("64 MiB", 1 << 24, 30)]
DATA = "synthetic:samples=64:test=16:dim=8:classes=2"


def job(clocks):
    return ["--workers", "1", "--sync", "asp", "--model", "softmax",
            "--data", DATA, "--batch", "1", "--optimizer", "sgd", "--lr",
            "0.0001", "--clocks", str(clocks), "--eval-every", "0"]


def run_cpp(floats, clocks):
    with LocalCluster(job(clocks)) as c:
        out = subprocess.run(
            [os.path.join(bin_dir(), "lockstep-bench-client"),
             "--coordinator", c.endpoint, "--floats", str(floats)],
            capture_output=True, text=True, check=True, timeout=600)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return r["pull_s"], r["push_s"]


def run_python(floats, clocks):
    with LocalCluster(job(clocks)) as c:
        w = lockstep.Worker(c.endpoint)
        w.register()
        data = lockstep.load_job_dataset(w)
        w.describe([("w", [floats], 0.01)], data.input_dim, data.classes,
                   data.train_samples, data.test_samples)
        pulls, pushes = [], []
        clock = 0
        while True:
            a = w.admit(clock)
            if a.finished:
                break
            clock = a.clock
            t = lockstep.now()
            w.pull(clock)
            pulls.append(lockstep.now() - t)
            w.gradient()
            t = lockstep.now()
            push_s, staleness, dropped = w.push(clock, a.quota)
            pushes.append(lockstep.now() - t)
            w.clock_done(clock, a.quota, 0.0, 0.0, pulls[-1], push_s, 0.0)
            clock += 1
    return float(np.median(pulls)), float(np.median(pushes))


def main():
    smoke = "--smoke" in sys.argv
    # One job key folder for every cluster of this run: the process's
    # Workers speak with one key, and each binary finds its own file.
    if "LOCKSTEP_KEYS" not in os.environ:
        os.environ["LOCKSTEP_KEYS"] = make_keys(
            os.path.join(tempfile.mkdtemp(prefix="lockstep-client-bench-"),
                         "keys"))
    sizes = [(n, f, 20) for n, f, _ in SIZES[:2]] if smoke else SIZES
    print("# client bench: one worker, ASP, 1 server over TCP loopback; "
          "median per call, median of 5 runs per client")
    print("| value | C++ pull us | Python pull us | ratio | C++ push us "
          "| Python push us | ratio |")
    print("|---|---|---|---|---|---|---|")
    overhead = None
    for name, floats, clocks in sizes:
        cpp, py = [], []
        for _ in range(1 if smoke else 5):
            cpp.append(run_cpp(floats, clocks))
            py.append(run_python(floats, clocks))
        c_pull, c_push = np.median(cpp, axis=0)
        p_pull, p_push = np.median(py, axis=0)
        print(f"| {name} | {c_pull * 1e6:.1f} | {p_pull * 1e6:.1f} | "
              f"{p_pull / c_pull:.2f}x | {c_push * 1e6:.1f} | "
              f"{p_push * 1e6:.1f} | {p_push / c_push:.2f}x |")
        if overhead is None:
            overhead = ((p_pull - c_pull) * 1e6, (p_push - c_push) * 1e6)
    print(f"# per-call overhead of Python at {sizes[0][0]}: pull "
          f"{overhead[0]:+.1f} us, push {overhead[1]:+.1f} us")


if __name__ == "__main__":
    main()
