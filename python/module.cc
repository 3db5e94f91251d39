// The extension module lockstep._lockstep (the package lockstep re-exports
// it): Worker, Admission, Dataset, load_dataset, Error, RolledBack, now.
#include <pybind11/pybind11.h>

#include <stdexcept>

#include "common/termination.h"
#include "python/errors.h"
#include "python/worker_binding.h"

namespace py = pybind11;

namespace lockstep::python {

void BindErrors(py::module_& m) {
  static py::exception<WorkerError> error(m, "Error", PyExc_RuntimeError);
  static py::exception<WorkerError> rolled_back(m, "RolledBack", error.ptr());
  // pybind11's translator type takes the pointer by value.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const WorkerError& e) {
      PyErr_SetString(e.rolled_back ? rolled_back.ptr() : error.ptr(),
                      e.what());
    }
  });
}

}  // namespace lockstep::python

PYBIND11_MODULE(_lockstep, m) {
  m.doc() = "Lockstep's worker client (C++); see the lockstep package.";
  lockstep::python::BindErrors(m);
  lockstep::python::BindWorker(m);
  lockstep::python::BindData(m);
  // A preempted job's exit status ($LOCKSTEP_PREEMPTED_EXIT_CODE, else 75):
  // a value no engine would read as "retry" stops the import, named.
  const auto preempted_code = lockstep::PreemptedExitCode();
  if (!preempted_code.ok()) {
    throw std::invalid_argument(preempted_code.status().message());
  }
  m.attr("EXIT_PREEMPTED") = *preempted_code;
  m.attr("EXIT_JOB_ABORTED") = lockstep::kExitJobAborted;
}
