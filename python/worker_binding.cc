// lockstep.Worker: a WorkerSession for Python. Every wait on the network
// releases the GIL; arrays it returns are views of the session's buffers
// (no copies) that keep the Worker alive.
#include "python/worker_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <csignal>

#include "common/clock.h"
#include "common/engine/placement.h"
#include "common/job_fields.h"
#include "common/security/key_flags.h"
#include "common/termination.h"
#include "common/transport/transport_keys.h"
#include "python/errors.h"
#include "worker/data/dataset_registry.h"
#include "worker/models/model_registry.h"
#include "worker/worker_runtime.h"
#include "worker/worker_session.h"

namespace py = pybind11;

namespace lockstep::python {
namespace {

using Admission = WorkerSession::Admission;

// A float32 array over `n` floats at `data`, owned by `owner`.
py::array_t<float> FloatView(float* data, size_t n, py::handle owner) {
  return py::array_t<float>({static_cast<py::ssize_t>(n)},
                            {static_cast<py::ssize_t>(sizeof(float))}, data,
                            owner);
}

// The session's model as the job's C++ model would describe it, for Python
// workers that mirror one (the MLP of a mixed job).
py::list TensorList(const ModelShape& shape) {
  py::list out;
  for (const TensorInfo& t : shape.tensors) {
    out.append(py::make_tuple(t.name, t.shape, t.init_scale));
  }
  return out;
}

ModelShape TensorsFrom(const py::iterable& tensors) {
  ModelShape shape;
  for (py::handle item : tensors) {
    const auto t = item.cast<py::tuple>();
    if (t.size() != 3) {
      throw py::value_error(
          "each tensor is (name, shape, init_scale), e.g. "
          "('fc0.weight', [128, 784], 0.05)");
    }
    TensorInfo info;
    info.name = t[0].cast<std::string>();
    info.shape = t[1].cast<std::vector<uint64_t>>();
    info.init_scale = t[2].cast<float>();
    info.size = 1;
    for (uint64_t d : info.shape) info.size *= d;
    shape.tensors.push_back(std::move(info));
  }
  return shape;
}

// With stop_on_signals, signals act as in lockstep-worker: SIGINT ends
// every wait of this process (the call raises lockstep.Error("interrupted
// by a signal")); SIGTERM, the engine's, leaves the job (the next admit()
// waits for the coordinator's word: released() or preempted()). A worker
// script wants that, a notebook its KeyboardInterrupt.
void StopOnSignals() {
  TerminationSignal::Install();
  std::signal(SIGINT, [](int) { WorkerSession::RequestStop(); });
}

}  // namespace

WorkerHandle::WorkerHandle(std::unique_ptr<WorkerSession> session)
    : session_(std::move(session)) {}

WorkerHandle::~WorkerHandle() = default;

namespace {

constexpr char kWorkerDoc[] = R"doc(
A worker of a Lockstep job: the protocol of lockstep-worker, with the model
computed by the caller. A clock: admit -> batch -> pull -> (compute into
gradient()) -> finish_compute -> push -> clock_done. Heartbeats run in a
C++ thread from register() on, and every network wait releases the GIL.
Errors raise lockstep.Error with the reason lockstep-worker would print;
a rollback to a snapshot round raises lockstep.RolledBack, after which
admit() continues at the rollback's clock.)doc";

// Admission: the coordinator's answer to admit().
void BindAdmission(py::module_& m) {
  py::class_<Admission>(m, "Admission",
                        "The coordinator's answer to Worker.admit(clock).")
      .def_readonly("finished", &Admission::finished,
                    "the job trained its last clock: finish()")
      .def_readonly("evaluate", &Admission::evaluate,
                    "evaluate the pulled model and report_evaluation()")
      .def_readonly("clock", &Admission::clock, "the clock admitted")
      .def_readonly("quota", &Admission::quota, "this worker's batch size")
      .def_readonly("offset", &Admission::offset,
                    "its first sample in the clock's global batch")
      .def("__repr__", [](const Admission& a) {
        return "Admission(clock=" + std::to_string(a.clock) +
               ", quota=" + std::to_string(a.quota) +
               ", finished=" + (a.finished ? "True" : "False") + ")";
      });
}

// Worker's joining: the constructor, register, the job.
void BindJoin(py::class_<WorkerHandle>& c) {
  c.def(py::init([](const std::string& coordinator, int rank,
                    double request_timeout_s, const std::string& hetero,
                    const std::string& real_link, const std::string& device,
                    bool stop_on_signals, bool evaluator,
                    const std::string& keys, const std::string& security) {
          // The worker key (empty: $LOCKSTEP_KEYS), or none under security
          // "off", for every Worker of this process.
          Check(KeepTransportKeys(
              Unwrap(ResolveJobKeys(keys, security, {KeyRole::kWorker}))));
          // As lockstep-worker does: the engine's environment fills what
          // the arguments leave open (docs/deployment.md).
          RoleFlags flags;
          flags.coordinator = coordinator;
          flags.rank = rank;
          const RoleFlags placed = Unwrap(PlaceRole(
              evaluator ? EngineRole::kEvaluator : EngineRole::kWorker, flags));
          WorkerOptions o;
          o.evaluator = evaluator;
          o.coordinator = placed.coordinator;
          o.rank_hint = placed.rank;
          o.request_timeout_s = request_timeout_s;
          o.hetero = hetero;
          o.real_link = real_link;
          o.device = device;
          if (stop_on_signals) StopOnSignals();
          return std::make_unique<WorkerHandle>(
              Unwrap(WorkerSession::Create(std::move(o))));
        }),
        py::arg("coordinator"), py::arg("rank") = -1,
        py::arg("request_timeout_s") = 300.0, py::arg("hetero") = "",
        py::arg("real_link") = "", py::arg("device") = "cpu",
        py::arg("stop_on_signals") = false, py::arg("evaluator") = false,
        py::arg("keys") = "", py::arg("security") = "on")
      .def(
          "register",
          [](WorkerHandle& w) {
            w.Locked([](WorkerSession& s) { Check(s.Register(), s); });
            return JobConfigToJson(w.session().job());
          },
          "Joins the job; returns its config as JSON text (rank() is set).")
      .def("rank", [](WorkerHandle& w) { return w.session().rank(); })
      .def(
          "is_evaluator",
          [](WorkerHandle& w) { return w.session().evaluator(); },
          "Whether this process is the job's evaluator: admit() then gives "
          "evaluation points (Admission.evaluate), and pull() after one "
          "reads the model at that point.")
      .def("job_json",
           [](WorkerHandle& w) { return JobConfigToJson(w.session().job()); });
}

// Worker's description of its model: the tensors, the data set, or why not.
void BindDescribe(py::class_<WorkerHandle>& c) {
  c.def(
       "job_model_tensors",
       [](WorkerHandle& w, uint64_t input_dim, uint32_t classes) {
         DataShape data;
         data.input_dim = input_dim;
         data.classes = classes;
         auto model = Unwrap(CreateModel(w.session().job().model, data, "cpu"));
         return TensorList(model->shape());
       },
       py::arg("input_dim"), py::arg("classes"),
       "(name, shape, init_scale) of the job's --model as lockstep-worker "
       "builds it, for a Python model that mirrors it.")
      .def(
          "describe",
          [](WorkerHandle& w, const py::iterable& tensors, uint64_t input_dim,
             uint32_t classes, uint64_t train_samples, uint64_t test_samples,
             uint32_t max_batch) {
            const JobShape shape{TensorsFrom(tensors),
                                 DataShape{false, input_dim, classes,
                                           train_samples, test_samples}};
            w.Locked([&](WorkerSession& s) {
              Check(s.Describe(shape, max_batch), s);
            });
          },
          py::arg("tensors"), py::arg("input_dim"), py::arg("classes"),
          py::arg("train_samples"), py::arg("test_samples"),
          py::arg("max_batch") = 0,
          "Describes the model's tensors [(name, shape, init_scale)] and the "
          "data set, then waits for the job to start.")
      .def(
          "report_setup_error",
          [](WorkerHandle& w, const std::string& why) {
            w.Locked([&](WorkerSession& s) {
              s.ReportSetupError(FailedPrecondition(why));
            });
          },
          py::arg("why"),
          "Tells the coordinator why this worker cannot join (it stops a job "
          "that has not started, or drops this worker).");
}

// Worker's clock: admit, batch, pull and the buffers.
void BindClock(py::class_<WorkerHandle>& c) {
  c.def(
       "admit",
       [](WorkerHandle& w, int64_t clock) {
         return w.Locked(
             [&](WorkerSession& s) { return Unwrap(s.Admit(clock), s); });
       },
       py::arg("clock"))
      .def(
          "batch",
          [](WorkerHandle& w, const Admission& a) {
            std::vector<uint64_t> samples;
            w.Locked([&](WorkerSession& s) { Check(s.Batch(a, &samples)); });
            return py::array_t<uint64_t>(
                static_cast<py::ssize_t>(samples.size()), samples.data());
          },
          "The sample ids of an admitted clock (the job's data order).")
      .def(
          "pull",
          [](const py::object& self, int64_t clock, bool emulate_link) {
            auto& w = self.cast<WorkerHandle&>();
            w.Locked([&](WorkerSession& s) {
              Check(s.Pull(clock, {}, {}, emulate_link), s);
            });
            return w.ParamsView(self);
          },
          py::arg("clock"), py::arg("emulate_link") = true,
          "Pulls the model for `clock`; returns the pull buffer (float32, no "
          "copy): the same memory every time. emulate_link=False for an "
          "evaluation's pull, which is not part of a clock.")
      .def(
          "params",
          [](const py::object& self) {
            return self.cast<WorkerHandle&>().ParamsView(self);
          },
          "The pull buffer (float32, no copy).")
      .def(
          "gradient",
          [](const py::object& self) {
            auto& w = self.cast<WorkerHandle&>();
            HostFloats* g =
                w.Locked([](WorkerSession& s) { return &s.Gradient(); });
            return FloatView(g->data(), g->size(), self);
          },
          "The buffer the next push sends (float32, no copy; write the mean "
          "gradient over the batch into it). Call it every clock: it may be "
          "another buffer than the last clock's.");
}

// Worker's reports of a clock: the compute's end, the push, clock done.
void BindReports(py::class_<WorkerHandle>& c) {
  c.def(
       "finish_compute",
       [](WorkerHandle& w, int64_t clock, uint32_t quota, double start_s,
          double cpu) {
         WorkerSession::ClockTimes t;
         w.Locked([&](WorkerSession& s) {
           s.FinishCompute(clock, quota, start_s, cpu, &t);
         });
         return py::make_tuple(t.compute_s, t.cpu_available);
       },
       py::arg("clock"), py::arg("quota"), py::arg("start_s"),
       py::arg("cpu") = 1.0,
       "After computing from start_s (lockstep.now()): waits what the "
       "heterogeneity profile adds; returns (compute_s, cpu_available).")
      .def(
          "push",
          [](WorkerHandle& w, int64_t clock, uint32_t batch) {
            WorkerSession::ClockTimes t;
            w.Locked(
                [&](WorkerSession& s) { Check(s.Push(clock, batch, &t), s); });
            return py::make_tuple(t.push_s, t.staleness, t.dropped);
          },
          py::arg("clock"), py::arg("batch"),
          "Pushes the buffer gradient() returned last as the mean over "
          "`batch` samples of `clock`; returns (push_s, staleness, "
          "shards_dropped).")
      .def(
          "clock_done",
          [](WorkerHandle& w, int64_t clock, uint32_t batch, double loss,
             double compute_s, double pull_s, double push_s, double wait_s,
             double cpu_available, int64_t staleness, uint32_t dropped) {
            WorkerSession::ClockTimes t;
            t.loss = loss;
            t.compute_s = compute_s;
            t.pull_s = pull_s;
            t.push_s = push_s;
            t.wait_s = wait_s;
            t.cpu_available = cpu_available;
            t.staleness = staleness;
            t.dropped = dropped;
            w.Locked([&](WorkerSession& s) { s.ClockDone(clock, batch, t); });
          },
          py::arg("clock"), py::arg("batch"), py::arg("loss"),
          py::arg("compute_s"), py::arg("pull_s"), py::arg("push_s"),
          py::arg("wait_s"), py::arg("cpu_available") = 1.0,
          py::arg("staleness") = 0, py::arg("dropped") = 0);
}

// A Python accessor: whether the coordinator ended the worker's part as
// `kind`.
auto EndedAs(JobEnding kind) {
  return [kind](WorkerHandle& w) {
    return w.Locked([kind](WorkerSession& s) { return s.ending() == kind; });
  };
}

// Worker's end: evaluations, the end of the job, the model file.
void BindEnd(py::class_<WorkerHandle>& c) {
  c.def(
       "report_evaluation",
       [](WorkerHandle& w, int64_t clock, double loss, double accuracy,
          uint64_t samples, bool final, double seconds) {
         w.Locked([&](WorkerSession& s) {
           s.ReportEvaluation(clock, loss, accuracy, samples, std::nan(""),
                              final, seconds);
         });
       },
       py::arg("clock"), py::arg("loss"), py::arg("accuracy"),
       py::arg("samples"), py::arg("final"), py::arg("seconds"))
      .def(
          "await_end",
          [](WorkerHandle& w) {
            return w.Locked(
                [](WorkerSession& s) { return Unwrap(s.AwaitEnd(), s); });
          },
          "After an admission with finished: the clock of a final "
          "evaluation to report, or None once the job is over.")
      .def("job_finished", EndedAs(JobEnding::kFinished))
      .def("preempted", EndedAs(JobEnding::kPreempted),
           "The coordinator ended the job as preempted: it resumes from its "
           "snapshot rounds (exit with lockstep.EXIT_PREEMPTED).")
      .def("released", EndedAs(JobEnding::kReleased),
           "After SIGTERM the coordinator let this worker go; the job goes "
           "on without it.")
      .def("aborted", EndedAs(JobEnding::kAborted),
           "The coordinator ended the job as failed: not this worker's "
           "failure (exit with lockstep.EXIT_JOB_ABORTED).")
      .def(
          "write_model",
          [](WorkerHandle& w, const std::string& path) {
            w.Locked([&](WorkerSession& s) {
              Check(WriteModelFile(path, s.params()));
            });
          },
          py::arg("path"),
          "Writes the pull buffer as a model file (lockstep-worker's "
          "--dump-model format).");
}

}  // namespace

void BindWorker(py::module_& m) {
  BindAdmission(m);
  py::class_<WorkerHandle> c(m, "Worker", kWorkerDoc);
  BindJoin(c);
  BindDescribe(c);
  BindClock(c);
  BindReports(c);
  BindEnd(c);
  m.def("now", &NowSeconds, "Monotonic seconds, the clock of finish_compute.");
}

py::array_t<float> WorkerHandle::ParamsView(py::handle self) {
  std::span<const float> p = session_->params();  // fixed after Describe
  // Writable: a caller may use it as a model's parameters in place; the
  // next pull overwrites it.
  return FloatView(const_cast<float*>(p.data()), p.size(), self);
}

}  // namespace lockstep::python
