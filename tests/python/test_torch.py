"""lockstep.torch's tensor tables: PyTorch's default bound for Linear and
Conv layers, and a clear refusal for what the servers cannot start."""
import math

import pytest
import torch

import lockstep.torch


def test_linear_and_conv_tensors_take_pytorchs_default_bound():
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5), torch.nn.ReLU(),
                              torch.nn.Flatten(), torch.nn.Linear(32, 10))
    table = lockstep.torch.torch_tensors(net)
    assert [(n, s) for n, s, _ in table] == [
        ("0.weight", [8, 3, 5, 5]), ("0.bias", [8]),
        ("3.weight", [10, 32]), ("3.bias", [10])]
    scales = [s for _, _, s in table]
    assert scales[0] == scales[1] == pytest.approx(1 / math.sqrt(75))
    assert scales[2] == scales[3] == pytest.approx(1 / math.sqrt(32))


def test_tensors_the_servers_cannot_start_are_refused():
    with pytest.raises(ValueError, match="normalization layer"):
        lockstep.torch.torch_tensors(torch.nn.BatchNorm1d(4))
    frozen = torch.nn.Linear(4, 2)
    frozen.bias.requires_grad_(False)
    with pytest.raises(ValueError, match="does not require grad"):
        lockstep.torch.torch_tensors(frozen)


class _Ended:
    """A worker after an Error, as lockstep.torch sees it."""

    def __init__(self, **how):
        self.how = how

    def __getattr__(self, name):
        return lambda: self.how.get(name, False)


def test_how_a_job_ended_is_the_workers_exit_status():
    from lockstep.torch import _ended
    assert _ended(_Ended(job_finished=True))
    for how, code in [({"preempted": True}, lockstep.EXIT_PREEMPTED),
                      ({"released": True}, lockstep.EXIT_PREEMPTED),
                      ({"aborted": True}, lockstep.EXIT_JOB_ABORTED)]:
        with pytest.raises(SystemExit) as ended:
            _ended(_Ended(**how))
        assert ended.value.code == code, how
    assert lockstep.EXIT_JOB_ABORTED == 3
    assert callable(lockstep.Worker.aborted)
