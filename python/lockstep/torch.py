"""Train a torch.nn.Module as a Lockstep worker.

    import lockstep, lockstep.torch
    args = lockstep.parse_worker_args()
    worker, job = lockstep.connect(args)
    data = lockstep.load_job_dataset(worker)
    lockstep.torch.train(worker, MyNet(), data, input_shape=(1, 28, 28),
                         dump_model=args.dump_model)

Each clock asks Lockstep for this worker's batch size (so LB-BSP's quotas
apply), pulls the model, computes the mean loss's gradient on the batch the
job's data order gives this worker, pushes it and reports the clock. The
servers own the model and its optimizer: the module's parameters are
replaced by views of the pull buffer and their .grad by views of the push
buffer, into which backward() accumulates in place (on the CPU: no copies;
on a GPU, each clock copies the parameters in and the gradients out).
"""
import math
import time
import warnings

import numpy as np
import torch

from . import EXIT_JOB_ABORTED, EXIT_PREEMPTED, Error, RolledBack, now


def torch_tensors(module):
    """(name, shape, init_scale) of every parameter, the scale PyTorch's own
    default bound for Linear and Conv layers, 1/sqrt(fan_in), for weights
    and biases alike: the servers start each tensor uniform in
    [-scale, scale] from the job's seed. A tensor that cannot start so (a
    normalization layer's weight starts at 1) or that does not train is
    refused: pass train(..., tensors=) for such a module."""
    params = dict(module.named_parameters())
    out = []
    for name, p in params.items():
        if not p.requires_grad:
            raise ValueError(f"parameter {name} does not require grad: the "
                             "servers train every tensor they hold")
        prefix = name.rsplit(".", 1)[0] + "." if "." in name else ""
        weight = p if p.dim() >= 2 else params.get(prefix + "weight")
        if weight is None or weight.dim() < 2:
            raise ValueError(f"parameter {name} belongs to no Linear or Conv "
                             "weight (a normalization layer's?): give its "
                             "initial scale in tensors=")
        fan_in = max(1, int(np.prod(weight.shape[1:])))
        out.append((name, list(p.shape), 1.0 / math.sqrt(fan_in)))
    return out


def _from_numpy(array):
    """A tensor over a read-only array of the data set (never written)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(array)


class _Binding:
    """The module's parameters as views of the pull buffer and their .grad
    as views of the push buffer, for the flat layout of `tensors`."""

    def __init__(self, module, tensors, device):
        self.params = [p for _, p in module.named_parameters()]
        if len(self.params) != len(tensors):
            raise ValueError(f"the module has {len(self.params)} parameters, "
                             f"the tensor table {len(tensors)}")
        self.offsets = []
        offset = 0
        for p, (name, shape, _) in zip(self.params, tensors):
            if list(p.shape) != list(shape):
                raise ValueError(f"parameter {name} has shape "
                                 f"{list(p.shape)}, the table says {shape}")
            self.offsets.append((offset, p.numel()))
            offset += p.numel()
        self.size = offset
        self.device = device
        self.pulled = None  # address of the buffer the views are on
        self.grads = None

    def _views(self, flat):
        t = torch.from_numpy(flat)
        return [t[o:o + n].view(p.shape)
                for p, (o, n) in zip(self.params, self.offsets)]

    def load(self, flat):
        if flat.size != self.size:
            raise ValueError(f"the job's model has {flat.size} parameters, "
                             f"this module {self.size}")
        if self.device.type != "cpu":
            for p, v in zip(self.params, self._views(flat)):
                p.data.copy_(v, non_blocking=True)
        elif self.pulled != flat.ctypes.data:
            for p, v in zip(self.params, self._views(flat)):
                p.data = v
            self.pulled = flat.ctypes.data

    def bind_grads(self, flat):
        """On the CPU: zeroes the push buffer and makes each .grad a view of
        it (backward accumulates in place). On a GPU: clears each .grad."""
        if self.device.type != "cpu":
            for p in self.params:
                p.grad = None
            return
        flat[:] = 0
        if self.grads != flat.ctypes.data:
            for p, v in zip(self.params, self._views(flat)):
                p.grad = v
            self.grads = flat.ctypes.data

    def store_grads(self, flat):
        """On a GPU: copies each .grad into the push buffer (zeros where a
        parameter got none)."""
        if self.device.type == "cpu":
            return
        for p, v in zip(self.params, self._views(flat)):
            if p.grad is not None:
                v.copy_(p.grad)
            else:
                v.zero_()


def evaluate(module, x, y, input_shape=None, device="cpu", chunk=1000,
             loss_fn=torch.nn.functional.cross_entropy):
    """(mean loss, accuracy) of `module` on NumPy rows x and labels y."""
    module.eval()
    loss_sum, correct = 0.0, 0
    with torch.no_grad():
        for s in range(0, len(x), chunk):
            xb = _from_numpy(x[s:s + chunk]).to(device)
            if input_shape is not None:
                xb = xb.view(-1, *input_shape)
            yb = _from_numpy(y[s:s + chunk]).long().to(device)
            out = module(xb)
            loss_sum += float(loss_fn(out, yb, reduction="sum"))
            correct += int((out.argmax(1) == yb).sum())
    module.train()
    n = max(1, len(x))
    return loss_sum / n, correct / n


def _final_evaluations(worker, admission, run_evaluation):
    """After the admission that said the job is finished: the final
    evaluations this process is asked for (the evaluator's, or a worker's
    in a job without one), then the end of the job."""
    end = admission.clock if admission.evaluate else worker.await_end()
    while end is not None:
        run_evaluation(end, True, False)
        end = worker.await_end()


def _ended(worker):
    """After an Error: whether the job ended for this worker without a
    failure (it finished). A preempted job exits the process with
    EXIT_PREEMPTED (75, or $LOCKSTEP_PREEMPTED_EXIT_CODE), so the engine's
    requeue or restart resumes it from its snapshot rounds; so does a
    worker let go after SIGTERM while the job goes on, so the engine
    replaces it and the replacement rejoins at the current clock."""
    if worker.preempted() or worker.released():
        raise SystemExit(EXIT_PREEMPTED)
    if worker.aborted():
        # The job failed, not this worker: the coordinator says why.
        raise SystemExit(EXIT_JOB_ABORTED)
    return worker.job_finished()


def _evaluate_points(worker, run_evaluation, state):
    """The evaluator's loop: the model at each evaluation point the
    coordinator admits it to (read from the servers' images of that point;
    training does not wait), then the final model."""
    point = 0
    while True:
        try:
            a = worker.admit(point)
            if a.finished:
                _final_evaluations(worker, a, run_evaluation)
                return state["accuracy"]
            run_evaluation(a.clock, False, False)
            point = a.clock + 1
        except RolledBack:
            continue  # admit() continues at the rollback's points
        except Error:
            if _ended(worker):
                return state["accuracy"]
            raise


def train(worker, module, data, loss_fn=torch.nn.functional.cross_entropy,
          tensors=None, input_shape=None, device=None, dump_model="",
          max_batch=0):
    """Describes `module` (its tensor table: `tensors`, else
    torch_tensors(module)) and `data` (a lockstep.Dataset) to the job and
    trains until the job is over. `input_shape` reshapes each row (e.g.
    (1, 28, 28) for a CNN); `device` is where the module computes ("cpu",
    the default, or "cuda[:N]"); `max_batch` the largest batch it takes
    (0: no limit), which LB-BSP respects. In the job's evaluator
    (worker.is_evaluator(): started with --evaluator) it evaluates instead,
    at every evaluation point and at the end. Returns the last test accuracy
    this process evaluated (None when it evaluated none)."""
    device = torch.device(device or "cpu")
    try:
        module.to(device)
        module.train()
        tensors = tensors if tensors is not None else torch_tensors(module)
        binding = _Binding(module, tensors, device)
    except Exception as e:
        worker.report_setup_error(f"{type(e).__name__}: {e}")
        raise
    worker.describe(tensors, data.input_dim, data.classes, data.train_samples,
                    data.test_samples, max_batch)
    x_all = _from_numpy(data.train_x)
    y_all = _from_numpy(data.train_y)
    state = {"accuracy": None}

    def run_evaluation(clock, final, pulled):
        start = now()
        if not pulled:
            binding.load(worker.pull(clock, emulate_link=False))
        loss, accuracy = evaluate(module, data.test_x, data.test_y,
                                  input_shape, device, loss_fn=loss_fn)
        worker.report_evaluation(clock, loss, accuracy, len(data.test_y),
                                 final, now() - start)
        state["accuracy"] = accuracy
        if final and dump_model:
            worker.write_model(dump_model)

    if worker.is_evaluator():
        return _evaluate_points(worker, run_evaluation, state)
    clock = 0
    while True:
        try:
            wait_start = now()
            a = worker.admit(clock)
            if a.finished:
                _final_evaluations(worker, a, run_evaluation)
                return state["accuracy"]
            clock = a.clock
            wait_s = now() - wait_start
            ids = torch.from_numpy(worker.batch(a).astype(np.int64))
            t = now()
            binding.load(worker.pull(clock))
            pull_s = now() - t
            grad = worker.gradient()
            start, cpu_start = now(), time.process_time()
            binding.bind_grads(grad)
            x = x_all[ids].to(device)
            if input_shape is not None:
                x = x.view(-1, *input_shape)
            loss = loss_fn(module(x), y_all[ids].long().to(device))
            loss.backward()
            binding.store_grads(grad)
            real = now() - start
            cpu = (time.process_time() - cpu_start) / real if real > 1e-4 else 1
            compute_s, cpu_available = worker.finish_compute(
                clock, a.quota, start, cpu)
            push_s, staleness, dropped = worker.push(clock, a.quota)
            worker.clock_done(clock, a.quota, float(loss), compute_s, pull_s,
                              push_s, wait_s, cpu_available, staleness,
                              dropped)
            clock += 1
        except RolledBack:
            continue  # admit() continues at the rollback's clock
        except Error:
            if _ended(worker):  # the job ended while this one waited
                return state["accuracy"]
            raise
