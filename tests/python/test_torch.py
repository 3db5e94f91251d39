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
