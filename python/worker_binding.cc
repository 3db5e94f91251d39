// lockstep.Worker: a WorkerSession for Python. Every wait on the network
// releases the GIL; arrays it returns are views of the session's buffers
// (no copies) that keep the Worker alive.
#include "python/worker_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <csignal>

#include "common/clock.h"
#include "common/job_fields.h"
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

// A stop request from SIGINT or SIGTERM ends every wait, as in
// lockstep-worker; the call raises lockstep.Error("interrupted by a
// signal").
void StopOnSignals() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  std::signal(SIGTERM, [](int) { WorkerSession::RequestStop(); });
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

// Worker's joining: the constructor, register, describe, the job.
void BindJoin(py::class_<WorkerHandle>& c) {
  c.def(py::init([](const std::string& coordinator, int rank,
                    double request_timeout_s, const std::string& hetero,
                    const std::string& real_link, const std::string& device) {
          WorkerOptions o;
          o.coordinator = coordinator;
          o.rank_hint = rank;
          o.request_timeout_s = request_timeout_s;
          o.hetero = hetero;
          o.real_link = real_link;
          o.device = device;
          StopOnSignals();
          return std::make_unique<WorkerHandle>(
              Unwrap(WorkerSession::Create(std::move(o))));
        }),
        py::arg("coordinator"), py::arg("rank") = -1,
        py::arg("request_timeout_s") = 300.0, py::arg("hetero") = "",
        py::arg("real_link") = "", py::arg("device") = "cpu")
      .def(
          "register",
          [](WorkerHandle& w) {
            {
              py::gil_scoped_release release;
              Check(w.session().Register(), w.session());
            }
            return JobConfigToJson(w.session().job());
          },
          "Joins the job; returns its config as JSON text (rank() is set).")
      .def("rank", [](WorkerHandle& w) { return w.session().rank(); })
      .def("job_json",
           [](WorkerHandle& w) { return JobConfigToJson(w.session().job()); })
      .def(
          "job_model_tensors",
          [](WorkerHandle& w, uint64_t input_dim, uint32_t classes) {
            DataShape data;
            data.input_dim = input_dim;
            data.classes = classes;
            auto model =
                Unwrap(CreateModel(w.session().job().model, data, "cpu"));
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
            JobShape shape{TensorsFrom(tensors),
                           DataShape{false, input_dim, classes, train_samples,
                                     test_samples}};
            py::gil_scoped_release release;
            Check(w.session().Describe(shape, max_batch), w.session());
          },
          py::arg("tensors"), py::arg("input_dim"), py::arg("classes"),
          py::arg("train_samples"), py::arg("test_samples"),
          py::arg("max_batch") = 0,
          "Describes the model's tensors [(name, shape, init_scale)] and the "
          "data set, then waits for the job to start.");
}

// Worker's clock: admit, batch, pull and the buffers.
void BindClock(py::class_<WorkerHandle>& c) {
  c.def(
       "admit",
       [](WorkerHandle& w, int64_t clock) {
         py::gil_scoped_release release;
         return Unwrap(w.session().Admit(clock), w.session());
       },
       py::arg("clock"))
      .def(
          "batch",
          [](WorkerHandle& w, const Admission& a) {
            std::vector<uint64_t> samples;
            w.session().Batch(a, &samples);
            return py::array_t<uint64_t>(
                static_cast<py::ssize_t>(samples.size()), samples.data());
          },
          "The sample ids of an admitted clock (the job's data order).")
      .def(
          "pull",
          [](const py::object& self, int64_t clock) {
            WorkerHandle& w = self.cast<WorkerHandle&>();
            {
              py::gil_scoped_release release;
              Check(w.session().Pull(clock, {}, {}), w.session());
            }
            return w.ParamsView(self);
          },
          py::arg("clock"),
          "Pulls the model for `clock`; returns the pull buffer (float32, no "
          "copy): the same memory every time.")
      .def(
          "params",
          [](const py::object& self) {
            return self.cast<WorkerHandle&>().ParamsView(self);
          },
          "The pull buffer (float32, no copy).")
      .def(
          "gradient",
          [](const py::object& self) {
            WorkerHandle& w = self.cast<WorkerHandle&>();
            HostFloats& g = w.session().Gradient();
            return FloatView(g.data(), g.size(), self);
          },
          "The buffer the next push sends (float32, no copy; write the mean "
          "gradient over the batch into it). It may be another buffer than "
          "the last clock's.");
}

// Worker's reports of a clock: the compute's end, the push, clock done.
void BindReports(py::class_<WorkerHandle>& c) {
  c.def(
       "finish_compute",
       [](WorkerHandle& w, int64_t clock, uint32_t quota, double start_s,
          double cpu) {
         WorkerSession::ClockTimes times;
         {
           py::gil_scoped_release release;
           w.session().FinishCompute(clock, quota, start_s, cpu, &times);
         }
         return py::make_tuple(times.compute_s, times.cpu_available);
       },
       py::arg("clock"), py::arg("quota"), py::arg("start_s"),
       py::arg("cpu") = 1.0,
       "After computing from start_s (lockstep.now()): waits what the "
       "heterogeneity profile adds; returns (compute_s, cpu_available).")
      .def(
          "push",
          [](WorkerHandle& w, int64_t clock, uint32_t batch) {
            WorkerSession::ClockTimes times;
            {
              py::gil_scoped_release release;
              Check(w.session().Push(clock, batch, false, &times), w.session());
            }
            return py::make_tuple(times.push_s, times.staleness, times.dropped);
          },
          py::arg("clock"), py::arg("batch"),
          "Pushes gradient() as the mean over `batch` samples of `clock`; "
          "returns (push_s, staleness, shards_dropped).")
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
            w.session().ClockDone(clock, batch, t);
          },
          py::arg("clock"), py::arg("batch"), py::arg("loss"),
          py::arg("compute_s"), py::arg("pull_s"), py::arg("push_s"),
          py::arg("wait_s"), py::arg("cpu_available") = 1.0,
          py::arg("staleness") = 0, py::arg("dropped") = 0);
}

// Worker's end: evaluations, the end of the job, the model file.
void BindEnd(py::class_<WorkerHandle>& c) {
  c.def(
       "report_evaluation",
       [](WorkerHandle& w, int64_t clock, double loss, double accuracy,
          uint64_t samples, bool final, double seconds) {
         w.session().ReportEvaluation(clock, loss, accuracy, samples,
                                      std::nan(""), final, seconds);
       },
       py::arg("clock"), py::arg("loss"), py::arg("accuracy"),
       py::arg("samples"), py::arg("final"), py::arg("seconds"))
      .def(
          "await_end",
          [](WorkerHandle& w) -> std::optional<int64_t> {
            py::gil_scoped_release release;
            return Unwrap(w.session().AwaitEnd(), w.session());
          },
          "After an admission with finished: the clock of a final "
          "evaluation to report, or None once the job is over.")
      .def("job_finished",
           [](WorkerHandle& w) { return w.session().job_finished(); })
      .def(
          "write_model",
          [](WorkerHandle& w, const std::string& path) {
            Check(WriteModelFile(path, w.session().params()));
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
  BindClock(c);
  BindReports(c);
  BindEnd(c);
  m.def("now", &NowSeconds, "Monotonic seconds, the clock of finish_compute.");
}

py::array_t<float> WorkerHandle::ParamsView(py::handle self) {
  std::span<const float> p = session_->params();
  // Writable: a caller may use it as a model's parameters in place; the
  // next pull overwrites it.
  return FloatView(const_cast<float*>(p.data()), p.size(), self);
}

}  // namespace lockstep::python
