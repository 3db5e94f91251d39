"""A coordinator and its server shards as local processes, for notebooks,
tests and benchmarks: Python workers (lockstep.Worker) then join at
`endpoint`, with the cluster's job keys (`keys`: the folder
lockstep-keys made). The binaries come from LOCKSTEP_BIN_DIR, else the
build tree beside this package (build/python/lockstep -> build/bin)."""
import os
import subprocess
import tempfile
import time


def bin_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("LOCKSTEP_BIN_DIR",
                          os.path.join(here, "..", "..", "bin"))


def make_keys(folder):
    """Makes a job's keys in `folder` (lockstep-keys) unless it holds them
    already; returns it."""
    if not os.path.exists(os.path.join(folder, "admin.key")):
        subprocess.run([os.path.join(bin_dir(), "lockstep-keys"), "--out",
                        folder], check=True, stdout=subprocess.DEVNULL)
    return folder


class LocalCluster:
    """lockstep-coordinator with `flags` (job flags: --workers, --model,
    --sync, ...) and `servers` lockstep-server processes on 127.0.0.1.
    The caller brings the workers, so the job runs without an evaluator
    (--evaluators 0: a worker evaluates the final model) unless `flags`
    say --evaluators 1 and the caller brings that too (a Worker with
    evaluator=True). Security is on: the job's keys are `keys` (a folder
    of lockstep-keys; default $LOCKSTEP_KEYS, else fresh ones in the run
    directory), and workers join with Worker(endpoint, keys=cluster.keys).
    stop() (or leaving a with block) kills them, by pid."""

    def __init__(self, flags, servers=1, run_dir=None, timeout_s=30,
                 keys=None):
        self.dir = run_dir or tempfile.mkdtemp(prefix="lockstep-cluster-")
        self.procs = []
        self.keys = keys or os.environ.get("LOCKSTEP_KEYS") or make_keys(
            os.path.join(self.dir, "keys"))
        try:
            log = self._start(
                ["lockstep-coordinator", "--listen", "tcp://127.0.0.1:0",
                 "--servers", str(servers), "--run-dir", self.dir,
                 "--keys", self.keys]
                + ([] if "--evaluators" in flags else ["--evaluators", "0"])
                + list(flags))
            self.endpoint = self._endpoint(log, timeout_s)
            for rank in range(servers):
                self._start(["lockstep-server", "--coordinator",
                             self.endpoint, "--listen", "tcp://127.0.0.1:0",
                             "--rank", str(rank), "--keys", self.keys])
        except BaseException:
            self.stop()
            raise

    def _start(self, argv):
        """Starts a binary with its output in a log of the run directory
        (a pipe nobody reads would stall it); returns the log's path."""
        path = os.path.join(self.dir, f"{argv[0]}-{len(self.procs)}.log")
        with open(path, "w") as log:
            self.procs.append(subprocess.Popen(
                [os.path.join(bin_dir(), argv[0])] + argv[1:], stdout=log,
                stderr=subprocess.STDOUT))
        return path

    def _endpoint(self, log, timeout_s):
        """The coordinator's endpoint from its "@endpoint" line."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with open(log) as f:
                for line in f:
                    if line.startswith("@endpoint "):
                        return line.split()[1]
            if self.procs[0].poll() is not None:
                raise RuntimeError(f"lockstep-coordinator exited; see {log}")
            time.sleep(0.05)
        raise RuntimeError(f"lockstep-coordinator printed no endpoint in "
                           f"{timeout_s} s; see {log}")

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
