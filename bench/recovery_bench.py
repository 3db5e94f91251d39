#!/usr/bin/python3
"""Recovery benchmark (not a test): the time from a server's SIGKILL to the
first clock committed after the job recovered, with real processes.

For each model size, a BSP job (an MLP 10000-H-10 over synthetic data, H
chosen for the size, Adam, 2 servers, 2 workers) runs under lockstep-launch
--supervise with a snapshot round every few clocks. Once a round is
complete, server 1 is SIGKILLed; the launcher restarts it, every shard
restores the newest complete round, and training continues. Each kill is
timed from the kill to the coordinator's "first commit after the recovery"
line (log timestamps, this machine's clock), and split into: until the
replacement registered (restart backoff + start), the restore (the
slowest shard's own figure), and the rest (workers' new Start, pull,
compute, push, commit: one clock of the model).

The baseline, measured in the same run right after the job: a plain
sequential read() of the restored shard's store files, as the restore found
them (not dropping the page cache: the round was just written). The target
is kill-to-commit under 2 s plus that read time.

With --kill coordinator: the coordinator is SIGKILLed instead; the
launcher restarts it alone and the live roles re-attach to it. Timed:
kill -> the new coordinator listening, and listening -> the job resumed
(every role back, the Starts sent), whether it adopted the servers' newest
commit, and whether the server processes are the same ones.

Usage: bench/recovery_bench.py [--params N,N] [--kills K] [--out FILE]
       [--kill server|coordinator]
"""
import argparse
import datetime
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCH = os.path.join(ROOT, "build", "bin", "lockstep-launch")
STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z")


def log_time(line):
    """Unix seconds of a log line's timestamp, or None."""
    m = STAMP.match(line)
    if not m:
        return None
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp()


def lines_after(path, since):
    """(time, line) of the log lines stamped at or after `since`."""
    out = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                t = log_time(line)
                if t is not None and t >= since - 0.001:
                    out.append((t, line.rstrip("\n")))
    except FileNotFoundError:
        pass
    return out


def child_server(launcher_pid, rank):
    """The pid of the launcher's lockstep-server child of `rank`, or None."""
    for pid in child_role(launcher_pid, b"lockstep-server", True):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if (b"--rank" in argv and
                argv[argv.index(b"--rank") + 1] == str(rank).encode()):
            return pid
    return None


def complete_rounds(snapshots):
    try:
        with open(os.path.join(snapshots, "manifest.json")) as f:
            rounds = json.load(f)["rounds"]
    except (OSError, ValueError, KeyError):
        return []
    return [r for r in rounds if r["complete"]]


def wait_for(what, predicate, timeout_s, launcher):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        if launcher.poll() is not None:
            raise RuntimeError(f"the job ended (exit {launcher.returncode}) "
                               f"while waiting for {what}")
        time.sleep(0.02)
    raise RuntimeError(f"timed out waiting for {what}")


def raw_read_s(store_dir):
    """Seconds to read every file of a store once, with plain read()."""
    buf = bytearray(8 << 20)
    total, start = 0, time.perf_counter()
    for path in sorted(glob.glob(os.path.join(store_dir, "*"))):
        if not os.path.isfile(path):
            continue
        with open(path, "rb", buffering=0) as f:
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                total += n
    return time.perf_counter() - start, total


def stop(launcher):
    """Stops the launcher (and so its job) as Ctrl-C would."""
    launcher.send_signal(signal.SIGINT)
    try:
        launcher.wait(60)
    except subprocess.TimeoutExpired:
        launcher.kill()
        launcher.wait()


def coordinator_times(logs, since):
    """Times of the coordinator's recovery lines after `since`: the loss
    noticed, the recovery done, the first commit after it."""
    marks = {}
    for t, line in lines_after(os.path.join(logs, "coordinator.log"), since):
        if "rolling every shard back" in line:
            marks.setdefault("noticed", t)
        elif "recovered in" in line:
            marks.setdefault("recovered", t)
        elif "first commit after the recovery" in line:
            marks.setdefault("commit", t)
    return marks if "commit" in marks else None


def restore_figure(logs, since, until):
    """The slowest shard's own restore time, and the round restored."""
    seconds, round_number = 0.0, None
    for path in glob.glob(os.path.join(logs, "server-*.log")):
        for t, line in lines_after(path, since):
            m = re.search(r"restored round (\d+) .* in ([0-9.e+-]+) s", line)
            if m and t <= until:
                seconds = max(seconds, float(m.group(2)))
                round_number = int(m.group(1))
    return seconds, round_number


def start_until_a_round(argv, run_dir):
    """Starts the job; returns the launcher and the snapshot folder once a
    round is complete (the job stopped on an error)."""
    os.makedirs(run_dir)
    with open(os.path.join(run_dir, "launch.out"), "w") as out:
        launcher = subprocess.Popen(argv, stdout=out, stderr=out)
    snapshots = os.path.join(run_dir, "snapshots")
    try:
        wait_for("a complete round", lambda: complete_rounds(snapshots), 600,
                 launcher)
    except Exception:
        stop(launcher)
        raise
    return launcher, snapshots


def one_kill(argv, run_dir):
    """Runs the job until a round is complete and a moment more, SIGKILLs
    server 1, waits for the first commit after the recovery, stops the
    job. Returns the timings."""
    launcher, snapshots = start_until_a_round(argv, run_dir)
    try:
        pid = wait_for("server 1", lambda: child_server(launcher.pid, 1), 30,
                       launcher)
        # The round a recovery restores; the manifest may prune it later.
        newest = complete_rounds(snapshots)[-1]
        time.sleep(0.3)  # mid-clock, not right at the round
        t_kill = time.time()
        os.kill(pid, signal.SIGKILL)
        logs = os.path.join(run_dir, "logs")
        marks = wait_for("the first commit after the recovery",
                         lambda: coordinator_times(logs, t_kill), 600,
                         launcher)
        restore_s, round_number = restore_figure(logs, t_kill, marks["commit"])
        round_bytes = next((r["bytes"] for r in complete_rounds(snapshots)
                            if r["round"] == round_number), newest["bytes"])
        if round_bytes <= 0:
            raise RuntimeError("no size for the restored round in "
                               + snapshots)
    finally:
        stop(launcher)
    return {
        "total_s": marks["commit"] - t_kill,
        "noticed_s": marks.get("noticed", t_kill) - t_kill,
        "recovery_s": marks.get("recovered", marks["commit"]) -
                      marks.get("noticed", t_kill),
        "clock_s": marks["commit"] - marks.get("recovered", marks["commit"]),
        "restore_s": restore_s,
        "round_bytes": round_bytes,
    }


def coordinator_marks(logs, since):
    """Times of the new coordinator's lines after `since`: it listens, and
    it resumes (every role re-attached; Starts sent), and how."""
    marks = {}
    for t, line in lines_after(os.path.join(logs, "coordinator.log"), since):
        if "listening on" in line:
            marks.setdefault("listening", t)
        elif "resuming from" in line:
            marks.setdefault("resumed", t)
            marks["adopted"] = "the servers' commit" in line
    return marks if "resumed" in marks else None


def kill_coordinator(argv, run_dir):
    """Runs the job until a round is complete and a moment more, SIGKILLs
    the coordinator, waits until the new one resumed the job with the live
    roles, stops the job. Returns the timings."""
    launcher, snapshots = start_until_a_round(argv, run_dir)
    try:
        pid = wait_for("the coordinator",
                       lambda: child_role(launcher.pid, b"lockstep-coordinator"),
                       30, launcher)
        servers = sorted(child_role(launcher.pid, b"lockstep-server", True))
        time.sleep(0.3)
        t_kill = time.time()
        os.kill(pid, signal.SIGKILL)
        marks = wait_for("the resumed job",
                         lambda: coordinator_marks(
                             os.path.join(run_dir, "logs"), t_kill),
                         600, launcher)
        same = sorted(child_role(launcher.pid, b"lockstep-server", True))
    finally:
        stop(launcher)
    return {
        "restart_s": marks["listening"] - t_kill,
        "resume_s": marks["resumed"] - marks["listening"],
        "adopted": marks["adopted"],
        "servers_kept": servers == same,
    }


def child_role(launcher_pid, binary, every=False):
    """The pid of the launcher's child running `binary` (all, with every)."""
    pids = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) != launcher_pid:
                continue
            pid = int(stat.split("/")[2])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if argv and argv[0].endswith(binary):
            pids.append(pid)
    return pids if every else (pids[0] if pids else None)


def job_argv(params, run_dir):
    dim, classes = 10000, 10
    hidden = max(1, params // dim)
    argv = [LAUNCH, "--supervise", "--servers", "2", "--workers", "2",
            "--model", f"mlp:{hidden}", "--data",
            f"synthetic:samples=256:test=32:dim={dim}:classes={classes}",
            "--batch", "4", "--optimizer", "adam", "--clocks", "1000000",
            "--eval-every", "0", "--snapshot-every-clocks", "4",
            "--snapshot-keep", "1", "--run-dir", run_dir]
    return argv, dim * hidden + hidden + hidden * classes + classes


def run_coordinator_kills(params, kills, workdir):
    """Kills the coordinator of a fresh job `kills` times."""
    results = []
    for k in range(kills):
        run_dir = os.path.join(workdir, f"coordinator-{params}-{k}")
        argv, n = job_argv(params, run_dir)
        results.append(kill_coordinator(argv, run_dir))
    rows = [f"# coordinator SIGKILLed, {n} params: kill->new coordinator "
            "listening (the launcher's 0.5 s backoff, its start) and "
            "listening->job resumed (every role re-attached, Starts sent)",
            "# job | kill->listening s | listening->resumed s | adopted the "
            "servers' commit | servers kept"]
    for k, r in enumerate(results):
        rows.append(f"{k:>5} | {r['restart_s']:17.2f} | {r['resume_s']:20.2f}"
                    f" | {'yes' if r['adopted'] else 'no':>29} | "
                    f"{'yes' if r['servers_kept'] else 'NO'}")
    med = statistics.median(r["resume_s"] for r in results)
    rows.append(f"# median listening->resumed {med:.2f} s (target <= 2 s: "
                f"{'met' if med <= 2 else 'NOT met'})")
    return rows


def run_size(params, kills, workdir):
    """Kills server 1 of a fresh job `kills` times (each sees the first
    restart's backoff, 0.5 s); returns the parameter count, the timings and
    the plain read of the last job's shard-1 store."""
    results = []
    for k in range(kills):
        run_dir = os.path.join(workdir, f"run-{params}-{k}")
        argv, n = job_argv(params, run_dir)
        results.append(one_kill(argv, run_dir))
    read_s, read_bytes = raw_read_s(os.path.join(run_dir, "snapshots",
                                                 "shard-1"))
    return n, results, read_s, read_bytes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--params", default="10000000,100000000")
    parser.add_argument("--kills", type=int, default=3,
                        choices=range(1, 101), metavar="K (1-100)")
    parser.add_argument("--out", help="also write the table here")
    parser.add_argument("--keep", action="store_true",
                        help="keep the run directories")
    parser.add_argument("--kill", choices=("server", "coordinator"),
                        default="server", help="which role to SIGKILL")
    args = parser.parse_args()
    if not os.access(LAUNCH, os.X_OK):
        sys.exit(f"{LAUNCH} is missing: build first (cmake --preset release "
                 "&& ninja -C build)")
    workdir = tempfile.mkdtemp(prefix="lockstep-bench-recovery-")
    if args.kill == "coordinator":
        rows = []
        for params in [int(p) for p in args.params.split(",")]:
            rows += run_coordinator_kills(params, args.kills, workdir)
        finish(rows, args, workdir)
        return
    rows = [
        "# recovery bench: MLP 10000-H-10, Adam, BSP, 2 servers, 2 "
        "workers, lockstep-launch --supervise; server 1 SIGKILLed once in "
        f"each of {args.kills} jobs per size; {os.cpu_count()} cores; medians",
        "# kill->commit = until noticed (0.5 s restart backoff, the new "
        "process starting and registering) + recovery (every shard restores)"
        " + first clock (Start, pull, compute, push, commit)",
        "# params    | kill->commit s | noticed s | recovery s | first clock "
        "s | restore s | plain read s | budget 2 s + read | met",
    ]
    for params in [int(p) for p in args.params.split(",")]:
        n, results, read_s, read_bytes = run_size(params, args.kills, workdir)
        med = {k: statistics.median(r[k] for r in results)
               for k in results[0]}
        # What one shard restores is its half of the round; the plain read
        # covers the store's files (the round plus RocksDB's own).
        shard_bytes = med["round_bytes"] / 2
        read_round_s = read_s * shard_bytes / max(read_bytes, 1)
        budget = 2 + read_round_s
        rows.append(
            f"{n:>11} | {med['total_s']:14.2f} | {med['noticed_s']:9.2f} | "
            f"{med['recovery_s']:10.2f} | {med['clock_s']:13.2f} | "
            f"{med['restore_s']:9.2f} | {read_round_s:12.2f} | "
            f"{budget:17.2f} | {'yes' if med['total_s'] <= budget else 'NO'}")
        rows.append(
            f"# {n} params: kill->commit per job (s): " +
            ", ".join(f"{r['total_s']:.2f}" for r in results) +
            f"; a shard's part of the round {shard_bytes / 1e6:.0f} MB; plain"
            f" read {read_bytes / 1e6 / read_s:.0f} MB/s")
    finish(rows, args, workdir)


def finish(rows, args, workdir):
    text = "\n".join(rows) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if not args.keep:
        subprocess.run(["rm", "-rf", workdir], check=False)


if __name__ == "__main__":
    main()
