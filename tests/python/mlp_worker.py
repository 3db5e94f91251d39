#!/usr/bin/python3
"""A Python worker computing the job's MLP (--model mlp:W1,W2,... or
softmax) in PyTorch, with the tensor table lockstep-worker describes, so
Python and C++ workers train one model together."""
import torch

import lockstep
import lockstep.torch


def mlp_from(tensors):
    """nn.Sequential of Linear layers (ReLU between) for a table of
    (fcI.weight [out, in], fcI.bias [out]) pairs."""
    layers = []
    for i in range(0, len(tensors), 2):
        out_features, in_features = tensors[i][1]
        if layers:
            layers.append(torch.nn.ReLU())
        layers.append(torch.nn.Linear(in_features, out_features))
    return torch.nn.Sequential(*layers)


def main():
    args = lockstep.parse_worker_args()
    torch.set_num_threads(1)
    worker, _ = lockstep.connect(args)
    data = lockstep.load_job_dataset(worker)
    tensors = worker.job_model_tensors(data.input_dim, data.classes)
    lockstep.torch.train(worker, mlp_from(tensors), data, tensors=tensors,
                         dump_model=args.dump_model)


if __name__ == "__main__":
    main()
