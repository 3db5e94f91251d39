// The Python module's Worker: a WorkerSession owned by a Python object.
// Thread-safety: any Python thread may call it; calls run one at a time
// (Locked: the GIL is released first, then the Worker's mutex taken, so a
// thread waiting on the network never blocks the others' Python code).
#ifndef LOCKSTEP_PYTHON_WORKER_BINDING_H_
#define LOCKSTEP_PYTHON_WORKER_BINDING_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>

#include "worker/worker_session.h"

namespace lockstep::python {

class WorkerHandle {
 public:
  explicit WorkerHandle(std::unique_ptr<WorkerSession> session);
  ~WorkerHandle();
  WorkerHandle(const WorkerHandle&) = delete;
  WorkerHandle& operator=(const WorkerHandle&) = delete;

  // Runs fn(session) without the GIL, alone on this Worker; returns its
  // result (a C++ value: Python objects are made after the GIL is back).
  template <typename Fn>
  auto Locked(Fn fn) {
    pybind11::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    return fn(*session_);
  }
  // The session without the lock: only for reading what does not change
  // after Register/Describe (rank, job, layout).
  const WorkerSession& session() const { return *session_; }

  // The pull buffer as a float32 array owned by `self` (this Worker).
  pybind11::array_t<float> ParamsView(pybind11::handle self);

 private:
  std::mutex mu_;
  std::unique_ptr<WorkerSession> session_;
};

// Adds Admission, Worker and now() to `m`.
void BindWorker(pybind11::module_& m);
// Adds Dataset, load_dataset() and load_job_dataset() to `m`.
void BindData(pybind11::module_& m);

}  // namespace lockstep::python

#endif  // LOCKSTEP_PYTHON_WORKER_BINDING_H_
