#!/usr/bin/python3
"""A user-defined PyTorch CNN trained on Fashion-MNIST as a Lockstep worker.

Run it through the launcher, one process per worker, under any policy:

    build/bin/lockstep-launch --workers 4 --servers 2 --sync bsp \\
        --worker-cmd "/usr/bin/python3 python/examples/train_cnn.py" \\
        --batch 64 --optimizer momentum --lr 0.05 --epochs 3

The job's flags (policy, batch, optimizer, epochs) come from the launcher;
the net is this file's. Each worker computes on one thread unless
--threads says otherwise.
"""
import argparse

import torch
import torch.nn.functional as F

import lockstep
import lockstep.torch


class Net(torch.nn.Module):
    """Two 3x3 convolutions with max-pooling, then two dense layers."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = torch.nn.Linear(64 * 7 * 7, 128)
        self.fc2 = torch.nn.Linear(128, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1,
                        help="PyTorch threads of this worker")
    args = lockstep.parse_worker_args(parser=parser)
    torch.set_num_threads(args.threads)
    worker, job = lockstep.connect(args)
    data = lockstep.load_job_dataset(worker)
    device = args.device if args.device.startswith("cuda") else "cpu"
    accuracy = lockstep.torch.train(worker, Net(data.classes), data,
                                    input_shape=(1, 28, 28), device=device,
                                    dump_model=args.dump_model)
    if accuracy is not None:
        print(f"worker {worker.rank()}: final test accuracy {accuracy:.4f}",
              flush=True)


if __name__ == "__main__":
    main()
