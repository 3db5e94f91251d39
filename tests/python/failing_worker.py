#!/usr/bin/python3
"""A Python worker whose model raises in its third forward pass: the
launcher must report the traceback's last lines."""
import torch

import lockstep
import lockstep.torch


class Fragile(torch.nn.Module):
    def __init__(self, inputs, classes):
        super().__init__()
        self.fc = torch.nn.Linear(inputs, classes)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls == 3:
            raise ValueError("fragile model gave up on its third batch")
        return self.fc(x)


def main():
    args = lockstep.parse_worker_args()
    worker, _ = lockstep.connect(args)
    data = lockstep.load_job_dataset(worker)
    # The job's tensor table, so it joins C++ workers of the softmax model.
    tensors = worker.job_model_tensors(data.input_dim, data.classes)
    lockstep.torch.train(worker, Fragile(data.input_dim, data.classes), data,
                         tensors=tensors)


if __name__ == "__main__":
    main()
