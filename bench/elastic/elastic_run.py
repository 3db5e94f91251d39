#!/usr/bin/python3
"""Elastic workers on Fashion-MNIST (a run and its plot, not a test): the
job starts with 4 workers (--max-workers 6), 2 more processes join once 300
clocks are committed, and 3 are terminated (SIGTERM, as a scale-down) 300
clocks later; under BSP (each worker its batch of 32; data order global)
and LB-BSP (one global batch of 128 re-split by predicted speed). Workers
run at uneven emulated speeds so LB-BSP's quotas differ. Writes each
clock's quotas (the workers' reports) as a plot and the final accuracies.

Usage: bench/elastic/elastic_run.py [--out-png FILE] [--out-txt FILE]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "build", "bin")
# Emulated per-sample cost of each rank (seconds): ranks 1 and 4 are slow.
SPEEDS = ["0.00006", "0.00018", "0.00006", "0.00009", "0.00018", "0.00006"]


def reports(run):
    path = os.path.join(run, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def wait_for(predicate, limit_s, what):
    deadline = time.time() + limit_s
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise SystemExit(f"elastic_run: timed out waiting for {what}")


def run(sync, work):
    run_dir = os.path.join(work, sync)
    coordinator = subprocess.Popen(
        [os.path.join(BIN, "lockstep-coordinator"), "--listen", "tcp://127.0.0.1:0",
         "--run-dir", run_dir, "--servers", "2", "--workers", "4",
         "--max-workers", "6", "--evaluators", "0", "--sync", sync,
         "--data-order", "global", "--model", "mlp:256,128", "--data", "fashion-mnist",
         "--batch", "32", "--optimizer", "momentum", "--lr", "0.05",
         "--clocks", "1400", "--lr-schedule", "cosine", "--eval-every", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    endpoint = None
    while endpoint is None:
        line = coordinator.stdout.readline()
        if not line:
            raise SystemExit("elastic_run: the coordinator ended before its endpoint")
        if line.startswith("@endpoint "):
            endpoint = line.split()[1]
    procs = {}

    def start(name, binary, rank, *extra):
        procs[name] = subprocess.Popen(
            [os.path.join(BIN, binary), "--coordinator", endpoint, "--rank", str(rank), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    for s in range(2):
        start(f"server{s}", "lockstep-server", s, "--listen", "tcp://127.0.0.1:0")
    for w in range(4):
        start(f"worker{w}", "lockstep-worker", w, "--hetero", f"linear=0.001+{SPEEDS[w]}")
    clocks = lambda: max((r["clock"] for r in reports(run_dir)), default=-1)
    wait_for(lambda: clocks() >= 300, 300, "300 clocks")
    for w in (4, 5):
        start(f"worker{w}", "lockstep-worker", w, "--hetero", f"linear=0.001+{SPEEDS[w]}")
    wait_for(lambda: clocks() >= 600, 300, "600 clocks")
    for w in (5, 4, 3):
        procs[f"worker{w}"].send_signal(signal.SIGTERM)
    try:
        out, _ = coordinator.communicate(timeout=600)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
            p.wait()
    left = {w: procs[f"worker{w}"].returncode for w in (3, 4, 5)}
    summary = json.load(open(os.path.join(run_dir, "summary.json")))
    return run_dir, summary, left, coordinator.returncode


def plot(runs, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    for sync, run_dir, summary in runs:
        total = {}
        for r in reports(run_dir):
            total[r["clock"]] = total.get(r["clock"], 0) + r["batch"]
        xs = sorted(total)
        top.plot(xs, [total[x] for x in xs], lw=1.2,
                 label=f"{sync} (test accuracy {summary['test_accuracy']:.4f})")
    top.set_ylabel("samples per clock")
    top.set_title("Global batch: BSP's grows and shrinks with the workers, "
                  "LB-BSP's stays 128")
    top.grid(alpha=0.3)
    top.legend(fontsize=8)
    sync, run_dir, summary = runs[-1]
    by_worker = {}
    for r in reports(run_dir):
        by_worker.setdefault(r["worker"], {})[r["clock"]] = r["batch"]
    for w in sorted(by_worker):
        xs = sorted(by_worker[w])
        bottom.plot(xs, [by_worker[w][x] for x in xs], lw=1.1,
                    label=f"worker {w} ({float(SPEEDS[w]) * 1e6:.0f} us/sample)")
    bottom.set_ylabel("batch quota")
    bottom.set_title(f"{sync}: each worker's quota (4 workers; 2 started at "
                     "clock 300; 3 terminated at clock 600)")
    bottom.grid(alpha=0.3)
    bottom.legend(ncol=3, fontsize=8, loc="upper right")
    bottom.set_xlabel("clock")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-png", default=os.path.join(ROOT, "docs", "elastic-quotas.png"))
    parser.add_argument("--out-txt", default="")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="lockstep-elastic.")
    # The job's keys: every role finds its own file through the environment.
    subprocess.run([os.path.join(BIN, "lockstep-keys"), "--out",
                    os.path.join(work, "keys")], check=True,
                   stdout=subprocess.DEVNULL)
    os.environ["LOCKSTEP_KEYS"] = os.path.join(work, "keys")
    runs, lines = [], []
    for sync in ("bsp", "lbbsp"):
        run_dir, summary, left, rc = run(sync, work)
        runs.append((sync, run_dir, summary))
        lines.append(f"{sync}: coordinator exit {rc}, leavers' exits {left}, clocks "
                     f"{summary['clocks']}, test accuracy {summary['test_accuracy']:.4f}, "
                     f"{summary['samples_per_s']:.0f} samples/s, removed workers "
                     f"{summary['dead_workers']}")
        print(lines[-1], flush=True)
    plot(runs, args.out_png)
    print(f"plot: {args.out_png}")
    if args.out_txt:
        with open(args.out_txt, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
