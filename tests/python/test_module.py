"""The lockstep module's surface: names, errors as exceptions, data sets
as NumPy views, and pulls and pushes through buffers without copies."""
import json
import os

import numpy as np
import pytest

import lockstep


def test_the_module_exports_the_worker_api():
    for name in ["Worker", "Admission", "Dataset", "Error", "RolledBack",
                 "load_dataset", "load_job_dataset", "now",
                 "parse_worker_args", "connect"]:
        assert hasattr(lockstep, name), name
    for method in ["register", "describe", "admit", "batch", "pull",
                   "params", "gradient", "finish_compute", "push",
                   "clock_done", "report_evaluation", "await_end",
                   "job_model_tensors", "write_model", "rank"]:
        assert callable(getattr(lockstep.Worker, method)), method
    assert issubclass(lockstep.Error, RuntimeError)
    assert issubclass(lockstep.RolledBack, lockstep.Error)


def test_errors_arrive_as_exceptions_with_the_binaries_reasons():
    with pytest.raises(lockstep.Error, match="--coordinator is required"):
        lockstep.Worker("")
    with pytest.raises(lockstep.Error, match="request-timeout-s must be > 0"):
        lockstep.Worker("tcp://127.0.0.1:9", request_timeout_s=0)
    nobody = lockstep.Worker("tcp://127.0.0.1:9", request_timeout_s=0.3)
    with pytest.raises(lockstep.Error,
                       match="no welcome from the coordinator at "
                             "tcp://127.0.0.1:9"):
        nobody.register()
    with pytest.raises(lockstep.Error, match="unknown data set"):
        lockstep.load_dataset("no-such-data")


def test_a_worker_joins_only_with_a_worker_key(monkeypatch):
    keys = os.environ["LOCKSTEP_KEYS"]  # conftest's folder
    monkeypatch.delenv("LOCKSTEP_KEYS")
    with pytest.raises(lockstep.Error, match="no job key.*--security off"):
        lockstep.Worker("tcp://127.0.0.1:9")
    with pytest.raises(lockstep.Error, match="is the server key"):
        lockstep.Worker("tcp://127.0.0.1:9",
                        keys=os.path.join(keys, "server.key"))
    args = lockstep.parse_worker_args(["--keys", "/k/worker.key"])
    assert (args.keys, args.security) == ("/k/worker.key", "on")


def test_calls_out_of_turn_raise_instead_of_crashing(cluster_of):
    c = cluster_of(["--workers", "1", "--model", "softmax", "--data",
                    "synthetic:samples=64:test=16:dim=8:classes=3",
                    "--eval-every", "0"])
    w = lockstep.Worker(c.endpoint, request_timeout_s=30)
    w.register()
    with pytest.raises(lockstep.Error, match="a pull before the job started"):
        w.pull(0)
    with pytest.raises(lockstep.Error, match="a push before the job started"):
        w.push(0, 8)
    with pytest.raises(ValueError, match=r"\(name, shape, init_scale\)"):
        w.describe([("w", [3])], 8, 3, 64, 16)


def test_worker_flags_are_lockstep_workers():
    args = lockstep.parse_worker_args(
        ["--coordinator", "tcp://h:1", "--rank", "3", "--hetero", "x2",
         "--device", "cuda:1", "-v"])
    assert (args.coordinator, args.rank, args.hetero, args.device,
            args.verbose) == ("tcp://h:1", 3, "x2", "cuda:1", True)
    # No --coordinator: the engine's environment may give it (Worker says
    # when nothing does); an unknown flag is still an error.
    assert lockstep.parse_worker_args(["--rank", "1"]).coordinator == ""
    with pytest.raises(SystemExit):
        lockstep.parse_worker_args(["--coordinator", "tcp://h:1", "--bogus"])


def test_a_worker_reads_its_place_from_the_engine(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"chief": ["127.0.0.1:9"], "ps": ["127.0.0.1:8"]},
        "task": {"type": "ps", "index": 0}}))
    with pytest.raises(lockstep.Error,
                       match="TF_CONFIG names this task a server"):
        lockstep.Worker("")


def test_a_data_set_is_a_view_of_the_loaded_rows():
    d = lockstep.load_dataset("synthetic:samples=300:test=50:dim=8:classes=3")
    assert (d.input_dim, d.classes, d.train_samples, d.test_samples) == (
        8, 3, 300, 50)
    assert d.train_x.shape == (300, 8) and d.train_x.dtype == np.float32
    assert not d.train_x.flags.writeable and not d.train_y.flags.writeable
    assert d.train_y.shape == (300,) and d.train_y.dtype == np.int32
    assert d.test_x.shape == (50, 8)
    assert set(np.unique(d.train_y)) <= {0, 1, 2}
    # Every access is the same memory, owned by the data set.
    assert not d.train_x.flags.owndata
    assert d.train_x.ctypes.data == d.train_x.ctypes.data
    assert d.train_x.base is d


def test_pull_and_push_go_through_pooled_buffers_without_copies(cluster_of):
    c = cluster_of(["--workers", "1", "--model", "softmax", "--clocks", "3",
                    "--data", "synthetic:samples=64:test=16:dim=8:classes=3",
                    "--batch", "8", "--optimizer", "sgd", "--lr", "0.5",
                    "--eval-every", "0"])
    w = lockstep.Worker(c.endpoint, request_timeout_s=30)
    job = json.loads(w.register())
    assert job["workers"] == 1 and w.rank() == 0
    w.describe([("w", [10, 3], 0.1), ("b", [3], 0.0)], 8, 3, 64, 16)
    a = w.admit(0)
    assert (a.clock, a.quota, a.finished) == (0, 8, False)
    assert len(w.batch(a)) == 8
    pulled = w.pull(0)
    assert pulled.dtype == np.float32 and pulled.shape == (33,)
    assert not pulled.flags.owndata and pulled.base is w
    assert np.all(np.abs(pulled[:30]) <= 0.1) and np.all(pulled[30:] == 0)
    assert np.any(pulled != 0)
    before = pulled.copy()
    grad = w.gradient()
    assert grad.shape == (33,) and grad.base is w
    grad[:] = np.arange(33, dtype=np.float32)
    push_s, staleness, dropped = w.push(0, 8)
    assert push_s >= 0 and dropped == 0
    w.clock_done(0, 8, 1.0, 0.001, 0.001, push_s, 0.0)
    a = w.admit(1)
    again = w.pull(1)
    # The same buffer, now holding clock 0's SGD step.
    assert again.ctypes.data == pulled.ctypes.data
    np.testing.assert_allclose(again, before - 0.5 * np.arange(33),
                               rtol=1e-6, atol=1e-6)
    assert w.params().ctypes.data == pulled.ctypes.data
    # The next push's buffer is the same memory as the last one's.
    assert w.gradient().ctypes.data == grad.ctypes.data
