"""Python workers in whole jobs started by lockstep-launch --worker-cmd:
a seconds-long two-worker job learns, and the example CNN runs under
every sync policy."""
import json
import os

import pytest

from conftest import SOURCE, launch

PYTHON = "/usr/bin/python3"


def summary(run_dir):
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f)


def test_two_python_workers_train_the_mlp():
    done, run_dir = launch(
        ["--workers", "2", "--servers", "1", "--model", "mlp:16",
         "--batch", "32", "--optimizer", "momentum", "--lr", "0.05",
         "--clocks", "60", "--train-limit", "3000", "--test-limit", "1000",
         "--eval-every", "30", "--worker-cmd",
         f"{PYTHON} {SOURCE}/tests/python/mlp_worker.py"])
    assert done.returncode == 0, done.stdout + done.stderr
    s = summary(run_dir)
    assert s["clocks"] == 60 and s["workers"] == 2
    assert s["test_accuracy"] > 0.6, s
    with open(os.path.join(run_dir, "config.json")) as f:
        assert "mlp_worker.py" in f.read()
    assert "test accuracy" in open(
        os.path.join(run_dir, "logs", "worker-0.log")).read()


@pytest.mark.parametrize("sync", ["bsp", "ssp:2", "asp", "backup:1", "lbbsp"])
def test_the_example_cnn_runs_under_every_policy(sync):
    done, run_dir = launch(
        ["--workers", "2", "--servers", "1", "--sync", sync,
         "--batch", "16", "--optimizer", "momentum", "--lr", "0.05",
         "--clocks", "30", "--train-limit", "2000", "--test-limit", "200",
         "--eval-every", "0", "--worker-cmd",
         f"{PYTHON} {SOURCE}/python/examples/train_cnn.py"])
    assert done.returncode == 0, done.stdout + done.stderr
    s = summary(run_dir)
    assert s["policy"].startswith(sync)
    # 30 clocks of 32 samples: well above chance (0.1) under every policy.
    assert s["test_accuracy"] > 0.3, s
