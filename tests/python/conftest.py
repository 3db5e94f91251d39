"""Fixtures for the lockstep module's tests: real coordinator and server
processes on 127.0.0.1 (the build's binaries, LOCKSTEP_BIN_DIR), killed by
pid when the test ends."""
import os
import subprocess
import tempfile

import pytest

from lockstep.cluster import LocalCluster, bin_dir, make_keys

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))

# One job key folder for the whole session: a process's Workers all speak
# with one key (lockstep.Worker), and every binary these tests start finds
# its own file in the folder through the environment.
if "LOCKSTEP_KEYS" not in os.environ:
    os.environ["LOCKSTEP_KEYS"] = make_keys(
        os.path.join(tempfile.mkdtemp(prefix="lockstep-pytest-keys-"),
                     "keys"))


@pytest.fixture
def cluster_of():
    """cluster_of(flags, servers=1): a running coordinator and servers."""
    made = []

    def make(flags, servers=1):
        made.append(LocalCluster(flags, servers))
        return made[-1]

    yield make
    for c in made:
        c.stop()


def launch(args, timeout_s=240):
    """Runs lockstep-launch with `args` and a fresh run directory; returns
    (completed process, run dir)."""
    run_dir = os.path.join(tempfile.mkdtemp(prefix="lockstep-pytest-"), "run")
    done = subprocess.run(
        [os.path.join(bin_dir(), "lockstep-launch"), "--run-dir", run_dir,
         "--timeout-s", str(timeout_s)] + args,
        capture_output=True, text=True, timeout=timeout_s + 30)
    return done, run_dir
