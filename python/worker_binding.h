// The Python module's Worker: a WorkerSession owned by a Python object.
// Thread-safety: as WorkerSession (one Python thread at a time; the GIL is
// released only inside the session's own waits).
#ifndef LOCKSTEP_PYTHON_WORKER_BINDING_H_
#define LOCKSTEP_PYTHON_WORKER_BINDING_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>

#include "worker/worker_session.h"

namespace lockstep::python {

class WorkerHandle {
 public:
  explicit WorkerHandle(std::unique_ptr<WorkerSession> session);
  ~WorkerHandle();

  WorkerSession& session() { return *session_; }
  // The pull buffer as a float32 array owned by `self` (this Worker).
  pybind11::array_t<float> ParamsView(pybind11::handle self);

 private:
  std::unique_ptr<WorkerSession> session_;
};

// Adds Admission, Worker and now() to `m`.
void BindWorker(pybind11::module_& m);
// Adds Dataset and load_dataset() to `m`.
void BindData(pybind11::module_& m);

}  // namespace lockstep::python

#endif  // LOCKSTEP_PYTHON_WORKER_BINDING_H_
