// The worker: registers with the coordinator, loads the job's data set and
// builds its model (through their registries: the loop knows neither),
// describes both to the coordinator, and once it has the layout runs the
// pull -> compute -> push -> clock loop until the job is over. The
// lowest-ranked live worker also evaluates on the test set every
// eval_every clocks and once at the end.
// Thread-safety: Run() owns every socket; one thread only.
#ifndef LOCKSTEP_WORKER_WORKER_RUNTIME_H_
#define LOCKSTEP_WORKER_WORKER_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/message.h"
#include "common/status.h"
#include "worker/data/dataset.h"
#include "worker/global_batch_order.h"
#include "worker/heartbeat_thread.h"
#include "worker/hetero_profile.h"
#include "worker/models/model.h"
#include "worker/ps_client.h"
#include "worker/real_link.h"
#include "worker/sample_stream.h"

namespace lockstep {

struct WorkerOptions {
  std::string coordinator;
  int rank_hint = -1;
  // Longest wait for any single reply (admission, pull, push).
  double request_timeout_s = 300;
  // The worker that runs the final evaluation writes the final dense model
  // here (see WriteModelFile).
  std::string dump_model;
  // Heterogeneity emulation (HeteroProfile grammar); empty = none.
  std::string hetero;
  // "HUB_NS:HUB_DEV:DEV": make the profile's net= link real by shaping
  // that veth pair (real_link.h) instead of emulating it; empty = emulate.
  std::string real_link;
  // Where the model computes: "cpu" or "cuda[:N]" (CreateComputeBackend).
  std::string device = "cpu";
};

// Writes "LSMODEL1", a little-endian uint64 count, then count float32s.
Status WriteModelFile(const std::string& path, std::span<const float> params);
StatusOr<std::vector<float>> ReadModelFile(const std::string& path);

class WorkerRuntime {
 public:
  static StatusOr<std::unique_ptr<WorkerRuntime>> Create(WorkerOptions options);
  ~WorkerRuntime();

  // Trains until the coordinator says the job is finished (OK), or fails.
  Status Run();
  static void RequestStop();
  static bool StopRequested();

 private:
  struct Admission {
    bool finished = false;
    bool evaluate = false;
    int64_t clock = 0;
    uint32_t quota = 0;
    uint64_t offset = 0;
  };
  struct ClockTimes {
    double wait_s = 0;
    double pull_s = 0;
    double compute_s = 0;
    double push_s = 0;
    double loss = 0;
    double cpu_available = 1;
    int64_t staleness = 0;
    uint32_t dropped = 0;
  };

  explicit WorkerRuntime(WorkerOptions options);

  Status Train();
  // Runs clocks from `first_clock` until the job ends, an error, or a
  // rollback (Aborted, rollback_ set).
  Status TrainFrom(int64_t first_clock);
  // Applies the rollback's Start; returns the clock to continue at.
  StatusOr<int64_t> Rollback();
  // Registers, sets up from the Welcome, describes the model and data, and
  // starts from the coordinator's Start (worker_setup.cc).
  Status Register();
  Status Setup(const wire::Welcome& welcome);
  // Loads the data set and builds the model the job names.
  Status LoadDataAndModel();
  void SendDescribe();
  Status Start(const wire::Start& start);
  // Tells the coordinator why this worker cannot join.
  void ReportSetupError(const Status& why);
  // Waits (heartbeating) for a message of type `type` until `deadline_ms`.
  StatusOr<bool> AwaitBody(wire::Body type, int64_t deadline_ms, Message* msg);
  StatusOr<Admission> RequestAdmission(int64_t clock);
  // Waits for the next message from the coordinator; heartbeats meanwhile.
  // Aborted when it is a rollback (kept in rollback_).
  StatusOr<bool> AwaitCoordinator(Message* msg, int64_t deadline_ms);
  // One message from the coordinator if one is queued (Heartbeats and bad
  // messages skipped); errors on Shutdown, Error and rollbacks as above.
  StatusOr<bool> ReceiveFromCoordinator(Message* msg);
  // PsClient's interrupt: a rollback, a shutdown, a signal or a silent
  // coordinator ends the request.
  Status CheckCoordinatorDuringRequest();
  Status RunClock(const Admission& admission, ClockTimes* times);
  // Computes the gradient with `compute`, then waits out the emulated
  // slowdown; fills compute_s and cpu_available. Fails with compute's
  // error.
  template <typename Compute>
  [[nodiscard]] Status TimedCompute(int64_t clock, uint32_t quota,
                                    ClockTimes* times, Compute compute);
  // Sleeps `seconds` (stops early on a stop request).
  // The net= link's time for `bytes` of a pull or push at `clock`, waited
  // after the real transfer.
  void LinkWait(int64_t clock, uint64_t bytes);
  void EmulatedWait(double seconds);
  Status PushGradient(int64_t clock, uint32_t quota, ClockTimes* times);
  // Evaluates the model at `clock` and reports it. `pulled`: params_ holds
  // this clock's dense model already (a sparse model pulls its test rows
  // either way).
  Status Evaluate(int64_t clock, bool final, bool pulled);
  // Waits for the end of the job, running the final evaluation if asked.
  Status Finish(Admission admission);
  void SendHeartbeat();
  // Unavailable once the coordinator has been silent too long.
  Status CheckCoordinatorAlive();
  void SendToCoordinator(zmq::message_t header);
  void SendClockDone(int64_t clock, uint32_t batch, const ClockTimes& t);
  // Coordinator silent for this long (ms) means it is gone.
  int64_t CoordinatorTimeoutMs() const;

  WorkerOptions options_;
  zmq::socket_t coordinator_;
  uint32_t rank_ = 0;
  JobConfig job_;
  KeyLayout layout_;
  std::unique_ptr<Dataset> data_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PsClient> ps_;
  std::unique_ptr<SampleStream> stream_;
  std::unique_ptr<GlobalBatchOrder> global_order_;
  HeteroProfile hetero_;
  std::optional<RealLink> real_link_;  // --real-link; unset: emulated
  std::vector<uint64_t> batch_;
  // Pulled parameters and the gradient the push frames point into, in the
  // model's host memory (page-locked for a GPU: the copies are DMA).
  HostFloats params_;
  std::shared_ptr<HostFloats> dense_grad_;
  std::shared_ptr<std::vector<uint64_t>> sparse_ids_;
  std::shared_ptr<std::vector<float>> sparse_grad_;
  std::vector<float> sparse_rows_;
  // The sparse ids and rows of the whole test split (sparse models only),
  // collected on the first evaluation.
  bool test_ids_ready_ = false;
  std::vector<uint64_t> test_ids_;
  std::vector<float> test_rows_;
  int64_t next_heartbeat_ms_ = 0;
  // Heartbeats once the worker has its rank (from the Welcome on).
  std::unique_ptr<HeartbeatThread> heartbeats_;
  int64_t last_heard_ms_ = 0;
  int64_t welcomed_ms_ = 0;
  // Pushes under a staleness rule: every shard follows shard 0's verdict
  // (PsClient::set_single_verdict).
  bool single_verdict_ = false;
  uint64_t bad_messages_ = 0;
  bool shutdown_finished_ = false;
  // Recovery epoch from the last Start; every report and request has it.
  uint32_t epoch_ = 0;
  // A Start that came while training: applied by Train().
  std::optional<Message> rollback_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_WORKER_RUNTIME_H_
