// A worker's part in a job, whatever computes its gradients: joining
// (Register -> Welcome -> Describe -> Start), admission to each clock and
// its batch in the job's data order, pulls and pushes through the server
// shards, clock reports, evaluation reports, rollbacks to a snapshot round
// and the end of the job. Its parts: the link to the coordinator
// (CoordinatorLink: heartbeats, waits, rollbacks), the heterogeneity
// emulation a worker's profile asks for (WorkerEmulation), the gradient
// buffers (PushBuffers) and the shards (PsClient). lockstep-worker
// (WorkerRuntime: a C++ model) and the Python module (python/: the user's
// PyTorch model) both drive one.
//
// A clock, in order: Admit(clock) -> Batch -> Pull -> compute into
// Gradient() -> FinishCompute -> Push -> ClockDone. Any wait may end with
// Unavailable when the coordinator rolled the job back to a snapshot round
// (rollback_pending()); the next Admit applies it and admits its clock.
// Thread-safety: one thread calls it (it owns the coordinator socket and
// the data channels); RequestStop() may be called from a signal handler.
#ifndef LOCKSTEP_WORKER_WORKER_SESSION_H_
#define LOCKSTEP_WORKER_WORKER_SESSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/job_shape.h"
#include "common/layout.h"
#include "common/security/peer_ticket.h"
#include "common/status.h"
#include "common/wire/message.h"
#include "common/wire/worker_messages.h"
#include "worker/compute/host_allocator.h"
#include "worker/coordinator_link.h"
#include "worker/emulation/worker_emulation.h"
#include "worker/global_batch_order.h"
#include "worker/ps_client.h"
#include "worker/push_buffers.h"
#include "worker/sample_stream.h"

namespace lockstep {

struct WorkerOptions {
  std::string coordinator;
  int rank_hint = -1;
  // Longest wait for any single reply (admission, pull, push).
  double request_timeout_s = 300;
  // How long a lost coordinator is waited for once training runs
  // (common/coordinator_watch.h); < 0: $LOCKSTEP_REATTACH_S or 0.
  double reattach_s = -1;
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
  // Join as the job's evaluator instead of a worker: admitted only to
  // evaluation points (Admission::evaluate), its Pull after such an
  // admission reads the model at that point from the shards' images, it
  // never pushes, and no training worker waits for it.
  bool evaluator = false;
};

class WorkerSession {
 public:
  struct Admission {
    bool finished = false;  // the job has trained its last clock
    bool evaluate = false;  // evaluate the model of `clock` and report it
    int64_t clock = 0;
    uint32_t quota = 0;   // this worker's batch
    uint64_t offset = 0;  // its first sample in the clock's global batch
  };
  // What a clock cost this worker, filled as it runs and reported in its
  // ClockDone.
  using ClockTimes = ClockCosts;

  // Checks the options and connects to the coordinator (nothing is sent).
  static StatusOr<std::unique_ptr<WorkerSession>> Create(WorkerOptions options);
  ~WorkerSession();
  WorkerSession(const WorkerSession&) = delete;
  WorkerSession& operator=(const WorkerSession&) = delete;

  // Stops every wait of every session with Unavailable("interrupted by a
  // signal"). Async-signal-safe.
  static void RequestStop();
  static bool StopRequested();

  // Registers and waits for the Welcome: rank() and job() are set, and
  // heartbeats start.
  Status Register();
  // Describes the model and data set this worker runs (every worker of a
  // job must describe the same) and the largest batch it takes (0: no
  // limit), then waits for the Start: layout() is set. REQUIRES: Register.
  Status Describe(const JobShape& shape, uint32_t max_batch);
  // Tells the coordinator why this worker cannot join: a device this
  // machine lacks (Unavailable, with a device other than the CPU) leaves
  // this worker out of the job; anything else stops the job before
  // training (every worker would fail alike), or drops this worker from a
  // running one.
  void ReportSetupError(const Status& why);

  uint32_t rank() const { return rank_; }
  bool evaluator() const { return options_.evaluator; }
  const JobConfig& job() const { return job_; }
  const KeyLayout& layout() const { return layout_; }
  const WorkerOptions& options() const { return options_; }

  // Where pulled parameters and gradients live: host memory the model's
  // device copies from and to at full speed. Call before the first Pull.
  void SetHostAllocator(HostAllocator<float> allocator);

  // Asks to start `clock`, waiting (and heartbeating) until the coordinator
  // answers. A rollback that arrived earlier is applied first, and the
  // request is for its clock instead. The answer's clock may be later than
  // asked (a worker that fell behind moves to the current clock).
  StatusOr<Admission> Admit(int64_t clock);
  // The samples of an admitted clock, in the job's data order.
  // FailedPrecondition before the job started (Describe).
  Status Batch(const Admission& admission, std::vector<uint64_t>* samples);

  // Pulls the dense model into params() and the rows of `sparse_ids`
  // (sorted, unique) into `sparse_out`, as the policy allows at `clock`;
  // with `emulate_link`, the profile's link is waited out too (an
  // evaluation's pull is not part of a clock). REQUIRES: Describe.
  Status Pull(int64_t clock, std::span<const uint64_t> sparse_ids,
              std::span<float> sparse_out, bool emulate_link = true);
  std::span<const float> params() const { return params_; }
  // The buffer of the next push's dense gradient (dense_keys() floats),
  // held by no frame of an earlier push. It may be another buffer than the
  // last clock's (when a frame still held that one), but every buffer this
  // returns, like params(), stays allocated as long as the session.
  HostFloats& Gradient();
  // The same for a sparse gradient of `rows` rows and their ids.
  std::vector<float>& SparseGradient(size_t rows);
  std::vector<uint64_t>& SparseIds();

  // After a clock's compute of `real_s` seconds: waits out what the
  // profile adds and fills times->compute_s (the profile's modeled time,
  // else NowSeconds() - `start`) and cpu_available (`cpu`, the share of a core
  // the process had, times the profile's reading; on an emulated machine, that
  // machine's load reading instead: MachineReading).
  void FinishCompute(int64_t clock, uint32_t quota, double start, double cpu,
                     ClockTimes* times);
  // Pushes the buffer Gradient() returned last (and, when the layout has
  // sparse rows, SparseGradient for SparseIds) as the mean over `batch`
  // samples of `clock`; fills push_s, staleness and dropped.
  Status Push(int64_t clock, uint32_t batch, ClockTimes* times);
  // Reports clock `clock` done with its timings.
  void ClockDone(int64_t clock, uint32_t batch, const ClockTimes& times);

  // Reports an evaluation of the model at `clock` that took `seconds` (the
  // evaluator: of the point its last Pull read, which is `clock` unless the
  // shards had moved past it).
  void ReportEvaluation(int64_t clock, double loss, double accuracy,
                        uint64_t samples, double auc, bool final,
                        double seconds);

  // Once an admission said the job is finished: waits for its end. Returns
  // the clock of a final evaluation the coordinator asks this worker for
  // (report it, then call again), or nullopt when the job is over.
  StatusOr<std::optional<int64_t>> AwaitEnd();
  // How the coordinator ended this worker's part, if it did: an error
  // from a wait with kFinished is the job's normal end; kPreempted,
  // kReleased and kAborted decide the exit status (CoordinatorLink).
  JobEnding ending() const { return coordinator_->ending(); }
  // Whether an error from a wait was a rollback: the next Admit applies it.
  bool rollback_pending() const { return coordinator_->rollback_pending(); }

 private:
  explicit WorkerSession(WorkerOptions options);

  // The coordinator's next message of type `body`, within the request
  // timeout. DeadlineExceeded names `what` did not come.
  StatusOr<Message> AwaitCoordinator(wire::Body body, const std::string& what);
  // The coordinator's Welcome, then its Start (or a rollback's), each a
  // verified message of that type.
  Status Setup(const Message& welcome);
  Status Start(const Message& start);
  // Applies the pending rollback's Start; returns the clock to continue at.
  StatusOr<int64_t> ApplyRollback();
  // The evaluator's Pull after an admission to evaluation point
  // eval_point_: every shard's image of that point.
  Status PullEvalPoint(std::span<const uint64_t> sparse_ids,
                       std::span<float> sparse_out);
  // FailedPrecondition naming `what` before the job started.
  Status CheckStarted(const char* what) const;
  // This session as the sender of its messages.
  WorkerSender sender() const;

  WorkerOptions options_;
  std::unique_ptr<CoordinatorLink> coordinator_;
  WorkerEmulation emulation_;
  uint32_t rank_ = 0;
  JobConfig job_;
  KeyLayout layout_;
  std::unique_ptr<PsClient> ps_;
  std::unique_ptr<SampleStream> stream_;
  std::unique_ptr<GlobalBatchOrder> global_order_;
  HostAllocator<float> allocator_;
  // Pulled parameters (one buffer across rollbacks), and the gradients.
  HostFloats params_;
  PushBuffers grads_;
  // Pushes under a staleness rule: every shard follows shard 0's verdict
  // (PsClient::set_single_verdict).
  bool single_verdict_ = false;
  bool on_commit_ = true;  // the policy applies pushes on commit
  // The evaluator: the point its next Pull reads (-1: none), and the point
  // its last one read (reported with the evaluation).
  int64_t eval_point_ = -1;
  int64_t read_point_ = -1;
  uint64_t refused_pushes_ = 0;  // pushes a shard refused (for the log)
  // The last push: its clock and how many shards refused it, which its
  // ClockDone reports (whoever drives the session, C++ or Python).
  int64_t pushed_clock_ = -1;
  uint32_t pushed_refused_ = 0;
  // What Describe said, which the Start's layout must fit.
  uint64_t described_dense_ = 0;
  uint32_t described_sparse_dim_ = 0;
  // Recovery epoch from the last Start; every report and request has it.
  uint32_t epoch_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_WORKER_SESSION_H_
