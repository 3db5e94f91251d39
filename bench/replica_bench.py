#!/usr/bin/python3
"""Replicated shards benchmark (not a test): what --replicas 1 costs and
what it buys, with real processes.

Failover: for each model size, a BSP job (an MLP 10000-H-10 over
synthetic data, Adam, 2 servers, 2 workers; recovery_bench's job) runs
under lockstep-launch --supervise --replicas 1. Once a snapshot round is
complete, server 1 is SIGKILLed: shard 1's backup on server 0 is promoted
and the workers reroute, with no rollback. Timed from the kill to the
coordinator's lines (log timestamps, this machine's clock): the loss
noticed (the backup's feed closed), the promoted server's answer, and
the first commit after the promotion. Checked: no shard rolled back.

Cost: the same job without a kill, and the demo job (scripts/demo.sh's
MLP on Fashion-MNIST, BSP, 2 servers, 4 workers), each run with
--replicas 0 and 1 alternately, a fixed number of clocks each; the ratio
of the medians of clocks per second, and where a clock's time goes
(the workers' compute / push / pull / wait shares).

Usage: bench/replica_bench.py [--params N,N] [--kills K] [--runs R]
       [--out FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recovery_bench as rb  # noqa: E402  (the shared job and helpers)

DEMO = ["--servers", "2", "--workers", "4", "--sync", "bsp", "--model",
        "mlp:256,128", "--data", "fashion-mnist", "--batch", "32",
        "--optimizer", "momentum", "--lr", "0.05", "--eval-every", "0"]


def promotion_marks(logs, since):
    """Times of the coordinator's promotion lines after `since`."""
    marks = {}
    for t, line in rb.lines_after(os.path.join(logs, "coordinator.log"),
                                  since):
        if "promoting shard" in line:
            marks.setdefault("noticed", t)
        elif "workers rerouted, nothing rolled back" in line:
            marks.setdefault("promoted", t)
        elif "first commit after the promotion" in line:
            marks.setdefault("commit", t)
        elif "rolling every shard back" in line:
            marks["rolled_back"] = True
    return marks if "commit" in marks else None


def one_failover(params, run_dir):
    argv, n = rb.job_argv(params, run_dir)
    argv += ["--replicas", "1"]
    launcher, _ = rb.start_until_a_round(argv, run_dir)
    try:
        pid = rb.wait_for("server 1", lambda: rb.child_server(launcher.pid, 1),
                          30, launcher)
        time.sleep(0.3)  # mid-clock, not right at the round
        t_kill = time.time()
        os.kill(pid, 9)
        logs = os.path.join(run_dir, "logs")
        marks = rb.wait_for("the first commit after the promotion",
                            lambda: promotion_marks(logs, t_kill), 600,
                            launcher)
    finally:
        rb.stop(launcher)
    return n, {
        "total_s": marks["commit"] - t_kill,
        "noticed_s": marks["noticed"] - t_kill,
        "promoted_s": marks.get("promoted", marks["commit"]) - marks["noticed"],
        "clock_s": marks["commit"] - marks.get("promoted", marks["commit"]),
        "rolled_back": marks.get("rolled_back", False),
    }


def failover_rows(sizes, kills, workdir):
    rows = [
        "# failover: MLP 10000-H-10, Adam, BSP, 2 servers, 2 workers, "
        f"--replicas 1; server 1 SIGKILLed once in each of {kills} jobs per "
        "size; medians",
        "# params    | kill->commit s | noticed s | promoted s | first clock "
        "s | rolled back | target <= 1 s",
    ]
    for params in sizes:
        results = []
        for k in range(kills):
            n, r = one_failover(params, os.path.join(workdir, f"f-{params}-{k}"))
            results.append(r)
        med = {key: statistics.median(r[key] for r in results)
               for key in ("total_s", "noticed_s", "promoted_s", "clock_s")}
        rolled = sum(r["rolled_back"] for r in results)
        rows.append(
            f"{n:>11} | {med['total_s']:14.3f} | {med['noticed_s']:9.3f} | "
            f"{med['promoted_s']:10.3f} | {med['clock_s']:13.3f} | "
            f"{rolled:>11} | {'met' if med['total_s'] <= 1 else 'NOT met'}")
        rows.append(f"# {n} params: kill->commit per job (s): " +
                    ", ".join(f"{r['total_s']:.3f}" for r in results))
    return rows


def timed_run(argv, run_dir):
    """Runs a job to its end; returns its summary."""
    os.makedirs(run_dir)
    with open(os.path.join(run_dir, "launch.out"), "w") as out:
        subprocess.run(argv + ["--run-dir", run_dir], stdout=out, stderr=out,
                       check=True, timeout=1800)
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f)


def cost_rows(name, argv, runs, workdir):
    """--replicas 0 and 1 alternately, `runs` each."""
    by = {0: [], 1: []}
    for k in range(runs):
        for replicas in (0, 1):
            by[replicas].append(timed_run(
                argv + ["--replicas", str(replicas)],
                os.path.join(workdir, f"{name}-{replicas}-{k}")))
    rows = []
    med = {}
    for replicas, summaries in by.items():
        cps = [s["clocks_per_s"] for s in summaries]
        med[replicas] = statistics.median(cps)
        shares = {key: statistics.median(s[key] for s in summaries)
                  for key in ("compute_share", "push_share", "pull_share",
                              "wait_share")}
        rows.append(
            f"# {name}, --replicas {replicas}: clocks/s " +
            ", ".join(f"{c:.1f}" for c in cps) +
            f" (median {med[replicas]:.1f}); a worker's clock: compute "
            f"{shares['compute_share']:.2f}, push {shares['push_share']:.2f}, "
            f"pull {shares['pull_share']:.2f}, wait {shares['wait_share']:.2f}")
    ratio = med[0] / med[1]
    rows.append(f"{name:<24} | {med[0]:12.1f} | {med[1]:12.1f} | "
                f"{ratio:17.3f}")
    return rows, ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--params", default="10000000,100000000")
    parser.add_argument("--kills", type=int, default=3,
                        choices=range(1, 101), metavar="K (1-100)")
    parser.add_argument("--runs", type=int, default=3,
                        choices=range(1, 101), metavar="R (1-100)")
    parser.add_argument("--demo-clocks", type=int, default=4000)
    parser.add_argument("--big-clocks", type=int, default=40)
    parser.add_argument("--out", help="also write the table here")
    args = parser.parse_args()
    if not os.access(rb.LAUNCH, os.X_OK):
        sys.exit(f"{rb.LAUNCH} is missing: build first")
    workdir = tempfile.mkdtemp(prefix="lockstep-bench-replica-")
    sizes = [int(p) for p in args.params.split(",")]
    rows = failover_rows(sizes, args.kills, workdir)
    rows += ["# cost: --replicas 1 against 0 in the same run, alternately, "
             f"{args.runs} runs each; {os.cpu_count()} cores shared by every "
             "role",
             "# job                      | clocks/s R=0 | clocks/s R=1 | "
             "time ratio R1/R0"]
    demo, demo_ratio = cost_rows(
        "demo", [rb.LAUNCH] + DEMO + ["--clocks", str(args.demo_clocks)],
        args.runs, workdir)
    big_argv, n = rb.job_argv(max(sizes), os.path.join(workdir, "unused"))
    big_argv = [a for a in big_argv if a != "--supervise"]
    i = big_argv.index("--clocks")
    big_argv[i + 1] = str(args.big_clocks)
    i = big_argv.index("--run-dir")
    del big_argv[i:i + 2]
    big, _ = cost_rows(f"mlp {n} params", big_argv, args.runs, workdir)
    rows += demo + big
    rows.append(f"# demo job: --replicas 1 takes {demo_ratio:.3f}x the time "
                f"of --replicas 0 (target <= 1.15x: "
                f"{'met' if demo_ratio <= 1.15 else 'NOT met'})")
    text = "\n".join(rows) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    subprocess.run(["rm", "-rf", workdir], check=False)


if __name__ == "__main__":
    main()
