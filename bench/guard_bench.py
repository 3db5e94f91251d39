#!/usr/bin/python3
"""The default push guard's cost and its honest refusals, measured on the
demo's job (issue 40): the job of scripts/demo.sh with the shards' outlier
bound on (--norm-outlier-factor 100, the default) and off (0), the two
alternating in one run so each ratio compares neighbours in time.

  bench/guard_bench.py [--build build] [--pairs 2] [--epochs 8] [--out FILE]

Per run: samples/s and test accuracy from its summary.json, and the pushes
refused (rejected_pushes): with only honest workers the guard must refuse
none. The ratio reported is off / on samples/s per pair (above 1: the
guard costs), and its median over the pairs. The report goes to stdout and,
with --out, to that file.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

DEMO_FLAGS = ["--servers", "2", "--workers", "4", "--sync", "bsp",
              "--model", "mlp:256,128", "--data", "fashion-mnist",
              "--batch", "32", "--optimizer", "momentum", "--lr", "0.05",
              "--lr-schedule", "cosine", "--eval-every", "200"]


def run_job(launch, epochs, factor, workdir):
    """summary.json of one demo job with --norm-outlier-factor `factor`."""
    run_dir = tempfile.mkdtemp(prefix="guard-", dir=workdir)
    os.rmdir(run_dir)
    cmd = [launch] + DEMO_FLAGS + ["--epochs", str(epochs),
                                   "--norm-outlier-factor", str(factor),
                                   "--run-dir", run_dir, "--timeout-s", "900"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f)


def commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                              check=True, capture_output=True,
                              text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--out")
    args = parser.parse_args()
    launch = os.path.join(args.build, "bin", "lockstep-launch")
    if not os.access(launch, os.X_OK):
        sys.exit(f"guard_bench: no {launch}: build first (scripts/build.sh)")
    workdir = tempfile.mkdtemp(prefix="guard-bench-")
    lines = [f"# bench/guard_bench.py at {commit()}, "
             f"{datetime.date.today().isoformat()}, {os.cpu_count()} CPUs: "
             f"the demo's job ({args.epochs} epochs), outlier guard on "
             f"(factor 100) and off, alternating",
             f"{'pair':>4} {'on samples/s':>13} {'off samples/s':>14} "
             f"{'off/on':>7} {'on acc':>7} {'off acc':>8} {'refused on':>11}"]
    ratios, refused = [], 0
    for pair in range(args.pairs):
        # The order alternates: neither setting always runs on a warm machine.
        order = [100, 0] if pair % 2 == 0 else [0, 100]
        got = {factor: run_job(launch, args.epochs, factor, workdir)
               for factor in order}
        on, off = got[100], got[0]
        ratio = off["samples_per_s"] / on["samples_per_s"]
        ratios.append(ratio)
        refused += int(on["rejected_pushes"])
        lines.append(f"{pair:>4} {on['samples_per_s']:>13.0f} "
                     f"{off['samples_per_s']:>14.0f} {ratio:>7.3f} "
                     f"{on['test_accuracy']:>7.4f} {off['test_accuracy']:>8.4f} "
                     f"{int(on['rejected_pushes']):>11}")
    lines.append(f"median off/on samples/s: {statistics.median(ratios):.3f}; "
                 f"honest pushes refused with the guard on: {refused}")
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
