"""A coordinator and its server shards as local processes, for notebooks,
tests and benchmarks: Python workers (lockstep.Worker) then join at
`endpoint`. The binaries come from LOCKSTEP_BIN_DIR, else the build tree
beside this package (build/python/lockstep -> build/bin)."""
import os
import subprocess
import tempfile
import time


def bin_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("LOCKSTEP_BIN_DIR",
                          os.path.join(here, "..", "..", "bin"))


class LocalCluster:
    """lockstep-coordinator with `flags` (job flags: --workers, --model,
    --sync, ...) and `servers` lockstep-server processes on 127.0.0.1.
    stop() (or leaving a with block) kills them, by pid."""

    def __init__(self, flags, servers=1, run_dir=None, timeout_s=30):
        self.dir = run_dir or tempfile.mkdtemp(prefix="lockstep-cluster-")
        self.procs = []
        coordinator = self._start(
            ["lockstep-coordinator", "--listen", "tcp://127.0.0.1:0",
             "--servers", str(servers), "--run-dir", self.dir] + list(flags))
        deadline = time.monotonic() + timeout_s
        self.endpoint = None
        try:
            while self.endpoint is None:
                line = coordinator.stdout.readline()
                if line.startswith("@endpoint "):
                    self.endpoint = line.split()[1]
                elif not line and coordinator.poll() is not None:
                    raise RuntimeError("lockstep-coordinator exited; see "
                                       + self.dir)
                if time.monotonic() > deadline:
                    raise RuntimeError("lockstep-coordinator printed no "
                                       "endpoint")
            for rank in range(servers):
                self._start(["lockstep-server", "--coordinator",
                             self.endpoint, "--listen", "tcp://127.0.0.1:0",
                             "--rank", str(rank)])
        except BaseException:
            self.stop()
            raise

    def _start(self, argv):
        name = f"{argv[0]}-{len(self.procs)}.log"
        with open(os.path.join(self.dir, name), "w") as log:
            proc = subprocess.Popen(
                [os.path.join(bin_dir(), argv[0])] + argv[1:],
                stdout=subprocess.PIPE, stderr=log, text=True)
        self.procs.append(proc)
        return proc

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout:
                proc.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
