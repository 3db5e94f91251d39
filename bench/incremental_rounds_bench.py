#!/usr/bin/python3
"""Incremental snapshot rounds benchmark (not a test): bytes a round stores
with every round full against incremental rounds, on the sparse-lr job.

The job: sparse logistic regression (sparse-lr, Adam) over generated
power-law LIBSVM data with many features, BSP with the global data order
(so the two runs train the same model, bit for bit), 2 servers, 2 workers,
a snapshot round every --interval clocks. It runs twice in this run, the
same job and interval: --snapshot-full-every 1 (the baseline: every round
full) and --snapshot-full-every K. Each round's bytes are the sum of the
shards' stores' figures in the coordinator's manifest.

Reported: per round, both runs' bytes; the median ratio full / incremental
over the rounds the incremental run stored as changes; the ratio of all
bytes written (full bases included); and the end-to-end check that both
runs' last rounds export (lockstep-snapshot export, through the chain of
parents for the incremental run) to the same bytes, after `verify` read
every chunk of every round.

Usage: bench/incremental_rounds_bench.py [--features N] [--samples N]
       [--interval C] [--full-every K] [--out FILE]
"""
import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def run(argv, **kwargs):
    return subprocess.run(argv, check=True, capture_output=True, text=True,
                          **kwargs)


def train(dir_, data, args, full_every):
    """Runs the job in dir_; returns the manifest's complete rounds."""
    snapshots = os.path.join(dir_, "snapshots")
    run([os.path.join(BIN, "lockstep-launch"), "--run-dir", dir_,
         "--timeout-s", "600", "--servers", "2", "--workers", "2",
         "--model", "sparse-lr", "--data", data, "--optimizer", "adam",
         "--lr", "0.05", "--batch", "64", "--epochs", str(args.epochs),
         "--sync", "bsp", "--data-order", "global", "--eval-every", "0",
         "--snapshot-dir", snapshots,
         "--snapshot-every-clocks", str(args.interval),
         "--snapshot-keep", "100000",
         "--snapshot-full-every", str(full_every)], timeout=900)
    with open(os.path.join(snapshots, "manifest.json")) as f:
        manifest = json.load(f)
    return snapshots, [r for r in manifest["rounds"] if r.get("complete")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--features", type=int, default=2000000)
    parser.add_argument("--samples", type=int, default=200000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--interval", type=int, default=20)
    parser.add_argument("--full-every", type=int, default=16)
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="lockstep-incremental-")
    data = os.path.join(work, "train.libsvm")
    run([os.path.join(BIN, "lockstep-gen-sparse"), "--out", data,
         "--samples", str(args.samples), "--features", str(args.features),
         "--nnz", "20", "--seed", "5"])
    runs = {}
    for k in (1, args.full_every):
        snapshots, rounds = train(os.path.join(work, f"full-every-{k}"), data,
                                  args, k)
        verify = run([os.path.join(BIN, "lockstep-snapshot"), "verify",
                      snapshots])
        runs[k] = (snapshots, {r["clock"]: r["bytes"] for r in rounds},
                   verify.stdout.count(": ok"))

    full, incremental = runs[1][1], runs[args.full_every][1]
    clocks = sorted(set(full) & set(incremental))
    lines = [
        f"sparse-lr, {args.samples} samples over {args.features} features "
        f"(zipf 1.1, 20 a sample), Adam, BSP, 2 servers, 2 workers, a round "
        f"every {args.interval} clocks; incremental: a full round every "
        f"{args.full_every}",
        f"{'clock':>6} {'full rounds':>14} {'incremental':>14} {'ratio':>7}"]
    ratios = []
    for c in clocks:
        ratio = full[c] / incremental[c] if incremental[c] else float("inf")
        # A round much smaller than the full one holds changes only.
        if incremental[c] * 2 < full[c]:
            ratios.append(ratio)
        lines.append(f"{c:>6} {full[c]:>14,} {incremental[c]:>14,} "
                     f"{ratio:>7.1f}")
    total_full = sum(full[c] for c in clocks)
    total_incremental = sum(incremental[c] for c in clocks)
    lines.append(f"rounds compared: {len(clocks)}; stored as changes: "
                 f"{len(ratios)}")
    if ratios:
        lines.append(f"median bytes per round, full / incremental (rounds "
                     f"stored as changes): {statistics.median(ratios):.1f}x")
    lines.append(f"all bytes written, full / incremental (bases included): "
                 f"{total_full / max(total_incremental, 1):.1f}x")

    exports = []
    for k in (1, args.full_every):
        out = os.path.join(work, f"export-{k}")
        run([os.path.join(BIN, "lockstep-snapshot"), "export", runs[k][0],
             out])
        exports.append(out)
    names = sorted(os.listdir(exports[0]))
    same = (names == sorted(os.listdir(exports[1])) and
            not filecmp.cmpfiles(exports[0], exports[1], names,
                                 shallow=False)[1])
    lines.append(f"verify: {runs[1][2]} and {runs[args.full_every][2]} "
                 f"shard rounds read whole and checked")
    lines.append(f"last round exported from both runs: "
                 f"{'identical' if same else 'DIFFERENT'} ({len(names)} "
                 f"files)")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    subprocess.run(["rm", "-rf", work], check=False)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
