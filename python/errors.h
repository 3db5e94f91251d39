// Status -> Python exceptions: lockstep.Error (a RuntimeError) carries the
// one-line reason lockstep-worker would print; lockstep.RolledBack, a
// subclass, says the coordinator rolled the job back to a snapshot round
// (Worker.admit then continues at its clock). C++ throws WorkerError, which
// may cross a GIL-released scope; the translator makes the Python
// exception once the GIL is held again.
// Thread-safety: Raise/Check/Unwrap from any thread; BindErrors once.
#ifndef LOCKSTEP_PYTHON_ERRORS_H_
#define LOCKSTEP_PYTHON_ERRORS_H_

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "common/status.h"
#include "worker/worker_session.h"

namespace lockstep::python {

struct WorkerError : std::runtime_error {
  WorkerError(const std::string& what, bool rolled_back)
      : std::runtime_error(what), rolled_back(rolled_back) {}
  bool rolled_back;
};

// Registers lockstep.Error and lockstep.RolledBack in `m`.
void BindErrors(pybind11::module_& m);

// Throws WorkerError for a failed `status`.
inline void Check(const Status& status) {
  if (!status.ok()) throw WorkerError(status.message(), false);
}
// The same, telling a rollback of `session` apart.
inline void Check(const Status& status, const WorkerSession& session) {
  if (!status.ok()) {
    throw WorkerError(status.message(), session.rollback_pending());
  }
}
template <typename T>
T Unwrap(StatusOr<T> value) {
  Check(value.status());
  return std::move(value).value();
}
template <typename T>
T Unwrap(StatusOr<T> value, const WorkerSession& session) {
  Check(value.status(), session);
  return std::move(value).value();
}

}  // namespace lockstep::python

#endif  // LOCKSTEP_PYTHON_ERRORS_H_
