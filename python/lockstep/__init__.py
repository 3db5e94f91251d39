"""Lockstep's Python client: a process that trains its own model (PyTorch,
NumPy, anything) as a worker of a Lockstep job, under any sync policy.

The C++ extension (_lockstep) speaks the worker protocol: joining a job,
admission to each clock with this worker's batch quota, pulls and pushes
through the server shards (into and out of buffers NumPy and PyTorch use
without copies), clock reports, evaluations, heartbeats from a C++ thread,
rollbacks after a server's crash. lockstep.torch puts a torch.nn.Module on
top of it.

A worker script started by `lockstep-launch --worker-cmd "python3 my.py"`
gets the same flags lockstep-worker gets; parse them with
parse_worker_args().
"""
import argparse
import json

from ._lockstep import (EXIT_JOB_ABORTED, EXIT_PREEMPTED, Admission, Dataset,
                        Error, RolledBack, Worker, load_dataset,
                        load_job_dataset, now)

__all__ = [
    "EXIT_JOB_ABORTED", "EXIT_PREEMPTED", "Admission", "Dataset", "Error",
    "RolledBack", "Worker",
    "load_dataset",
    "load_job_dataset", "now", "parse_worker_args", "connect",
]


def parse_worker_args(argv=None, parser=None):
    """The flags lockstep-launch passes a worker (--coordinator, --rank,
    --hetero, --device, --real-link, --request-timeout-s, --dump-model,
    --evaluator, -v),
    added to `parser` (a new one by default). Unknown flags are an error,
    as for lockstep-worker."""
    parser = parser or argparse.ArgumentParser(
        description="a Lockstep worker in Python")
    parser.add_argument("--coordinator", default="",
                        help="coordinator endpoint, e.g. tcp://HOST:7400 "
                        "(default: from the cluster engine's environment, "
                        "docs/deployment.md)")
    parser.add_argument("--rank", type=int, default=-1,
                        help="preferred worker rank")
    parser.add_argument("--request-timeout-s", type=float, default=300.0)
    parser.add_argument("--hetero", default="",
                        help="heterogeneity emulation profile")
    parser.add_argument("--real-link", default="")
    parser.add_argument("--device", default="cpu",
                        help="cpu, or cuda[:N] for the model's tensors")
    parser.add_argument("--dump-model", default="",
                        help="write the final model here (the process that "
                        "runs the final evaluation)")
    parser.add_argument("--evaluator", action="store_true",
                        help="join as the job's out-of-band evaluator "
                        "(lockstep-launch starts one with this flag)")
    parser.add_argument("--keys", default="",
                        help="this worker's job key file (lockstep-launch "
                        "passes it; default: $LOCKSTEP_KEYS)")
    parser.add_argument("--security", default="on",
                        help="'off' joins a job that runs without keys")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args(argv)


def connect(args):
    """A Worker for parsed worker flags, registered with the coordinator:
    returns (worker, job), job the job's config as a dict. As in
    lockstep-worker, SIGINT and SIGTERM then end any wait of the worker
    (lockstep.Error "interrupted by a signal")."""
    worker = Worker(args.coordinator, rank=args.rank,
                    request_timeout_s=args.request_timeout_s,
                    hetero=args.hetero, real_link=args.real_link,
                    device=args.device, stop_on_signals=True,
                    evaluator=args.evaluator, keys=args.keys,
                    security=args.security)
    job = json.loads(worker.register())
    return worker, job
