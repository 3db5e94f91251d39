// lockstep-worker: a WorkerSession driven by a C++ model. Joins the job,
// loads the job's data set and builds its model (through their registries:
// the loop knows neither), describes both, and runs the pull -> compute ->
// push -> clock loop until the job is over, starting again from a rollback's
// clock when the coordinator rolls the job back. The lowest-ranked live
// worker also evaluates on the test set when admissions ask it to, and
// once at the end.
// Thread-safety: Run() owns every socket; one thread only.
#ifndef LOCKSTEP_WORKER_WORKER_RUNTIME_H_
#define LOCKSTEP_WORKER_WORKER_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/data/dataset.h"
#include "worker/models/model.h"
#include "worker/worker_session.h"

namespace lockstep {

// Writes "LSMODEL1", a little-endian uint64 count, then count float32s.
Status WriteModelFile(const std::string& path, std::span<const float> params);
StatusOr<std::vector<float>> ReadModelFile(const std::string& path);

class WorkerRuntime {
 public:
  static StatusOr<std::unique_ptr<WorkerRuntime>> Create(WorkerOptions options);
  ~WorkerRuntime();
  WorkerRuntime(const WorkerRuntime&) = delete;
  WorkerRuntime& operator=(const WorkerRuntime&) = delete;

  // Trains until the coordinator says the job is finished (OK), or fails.
  Status Run();
  // WorkerSession::RequestStop: async-signal-safe.
  static void RequestStop() { WorkerSession::RequestStop(); }
  // How the coordinator ended this worker's part: preempted (resumable),
  // released (terminated alone, the job goes on), aborted (the job
  // failed, not this worker), finished.
  JobEnding ending() const { return session_->ending(); }
  // Whether its device is one this machine lacks (CreateComputeBackend's
  // Unavailable): the job went on without it.
  bool device_unavailable() const { return device_unavailable_; }

 private:
  using Admission = WorkerSession::Admission;
  using ClockTimes = WorkerSession::ClockTimes;

  explicit WorkerRuntime(std::unique_ptr<WorkerSession> session);

  Status Train();
  // Registers, loads the data set and the model, describes them.
  Status Join();
  // Runs clocks (from the one Admit gives) until the job ends, an error, or
  // a rollback (session_->rollback_pending()).
  Status TrainClocks();
  // The evaluator's loop (WorkerOptions::evaluator): evaluates each point
  // it is admitted to, then the final model.
  Status EvaluatePoints();
  Status RunClock(const Admission& admission, ClockTimes* times);
  // Evaluates the model at `clock` and reports it. `pulled`: params()
  // holds this clock's dense model already (a sparse model pulls its test
  // rows either way).
  Status Evaluate(int64_t clock, bool final, bool pulled);
  // Waits for the end of the job, running the final evaluations asked for.
  Status Finish(Admission admission);

  bool device_unavailable_ = false;
  std::unique_ptr<WorkerSession> session_;
  std::unique_ptr<Dataset> data_;
  std::unique_ptr<Model> model_;
  std::vector<uint64_t> batch_;
  std::vector<float> sparse_rows_;
  // The sparse ids and rows of the whole test split (sparse models only),
  // collected on the first evaluation.
  bool test_ids_ready_ = false;
  std::vector<uint64_t> test_ids_;
  std::vector<float> test_rows_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_WORKER_RUNTIME_H_
