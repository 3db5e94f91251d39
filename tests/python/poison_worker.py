#!/usr/bin/python3
"""A Python worker computing the job's MLP whose forward turns NaN after
--nan-after training steps (an overflowing loss, a bad sample, a hostile
peer: the push it makes from then on is poison), whose gradient is
multiplied by --scale after --scale-after steps (finite but hostile: -20
pushes twenty times the ascent direction), or that leaves the job
(SIGTERM to itself) after --leave-after steps: the same job without its
pushes from that step on, for comparison."""
import argparse
import os
import signal

import torch

import lockstep
import lockstep.torch
from mlp_worker import mlp_from


class Poisoned(torch.nn.Module):
    """`inner`, whose training forward returns NaN from step `after` + 1,
    whose gradient is `scale` times the true one from step `scale_after` +
    1, or which terminates its process at step `leave` + 1."""

    def __init__(self, inner, after, leave, scale_after=-1, scale=1.0):
        super().__init__()
        self.inner = inner
        self.after = after
        self.leave = leave
        self.scale_after = scale_after
        self.scale = scale
        self.steps = 0

    def forward(self, x):
        out = self.inner(x)
        if not self.training:
            return out
        self.steps += 1
        if 0 <= self.leave < self.steps:
            os.kill(os.getpid(), signal.SIGTERM)
            self.leave = -1
        if 0 <= self.after < self.steps:
            return out * float("nan")
        if 0 <= self.scale_after < self.steps:
            # The same value, `scale` times its gradient.
            return out * self.scale + out.detach() * (1 - self.scale)
        return out


def main():
    parser = argparse.ArgumentParser(description="a poisoning worker")
    parser.add_argument("--nan-after", type=int, default=-1)
    parser.add_argument("--leave-after", type=int, default=-1)
    parser.add_argument("--scale-after", type=int, default=-1)
    parser.add_argument("--scale", type=float, default=1.0)
    args = lockstep.parse_worker_args(parser=parser)
    torch.set_num_threads(1)
    worker, _ = lockstep.connect(args)
    data = lockstep.load_job_dataset(worker)
    tensors = worker.job_model_tensors(data.input_dim, data.classes)
    module = Poisoned(mlp_from(tensors), args.nan_after, args.leave_after,
                      args.scale_after, args.scale)
    lockstep.torch.train(worker, module, data, tensors=tensors,
                         dump_model=args.dump_model)


if __name__ == "__main__":
    main()
