// A server shard: one contiguous dense key range (and a slice of the sparse
// id space) of the model, with its optimizer state, in memory. Serves pulls
// and pushes from workers on its data port and follows the coordinator's
// commits: pushes are buffered per clock and applied on Commit(c, workers)
// (apply mode OnCommit), or applied on arrival (OnArrival). A pull for clock
// c under OnCommit is deferred until clock c-1 is applied. ShardClock
// (shard_clock.h) makes those decisions; this class does the I/O and the
// arithmetic.
// Thread-safety: Run() owns both sockets and all state; one thread only.
#ifndef LOCKSTEP_SERVER_SERVER_SHARD_H_
#define LOCKSTEP_SERVER_SERVER_SHARD_H_

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/lr_schedule.h"
#include "common/status.h"
#include "common/transport/data_port.h"
#include "common/wire/message.h"
#include "server/arrival_clock.h"
#include "server/background_apply.h"
#include "server/dense_store.h"
#include "server/eval_images.h"
#include "server/optimizers/optimizer.h"
#include "server/push_aggregator.h"
#include "server/shard_clock.h"
#include "server/shard_keys.h"
#include "server/snapshot/shard_round.h"
#include "server/snapshot/snapshot_capture.h"
#include "server/sparse_table.h"
#include "server/store/snapshot_store.h"

namespace lockstep {

struct ServerOptions {
  // The coordinator's endpoint, e.g. "tcp://10.0.0.1:7400".
  std::string coordinator;
  // Where workers connect (see common/transport/endpoint.h): "tcp://host:port"
  // or "ipc:///path" for the direct transport, "zmq+tcp://..." for ZeroMQ. Port
  // 0 picks a free port.
  std::string listen = "tcp://0.0.0.0:0";
  // Host name workers use when `listen` is a wildcard address.
  std::string advertise;
  int rank_hint = -1;
  double welcome_timeout_s = 300;
};

class ServerShard {
 public:
  static StatusOr<std::unique_ptr<ServerShard>> Create(ServerOptions options);
  ~ServerShard();

  // The endpoint workers connect to.
  const std::string& endpoint() const { return endpoint_; }
  // Registers, serves until Shutdown. Errors: the coordinator vanished or
  // sent an unusable job.
  Status Run();
  static void RequestStop();

  // Counters, for tests and logs.
  uint64_t bad_messages() const {
    return bad_messages_ + (data_ ? data_->bad_streams() : 0);
  }

 private:
  explicit ServerShard(ServerOptions options);

  Status AwaitWelcome();
  Status Setup(const wire::Welcome& welcome);
  Status Serve();
  Status HandleCoordinatorMessage(Message& msg, bool* stop);
  void HandleWorkerMessage(Message& msg);
  void HandlePull(Message& msg);
  // Answers a pull from the live state, or from `image` (an evaluation
  // point's) when not null.
  void ServePull(Message& msg, const EvalImages::Image* image);
  // Serves the deferred pulls now ready, the evaluator's too.
  void ServeDeferredPulls();
  // Whole clocks of global progress the state holds: the commits applied,
  // or on arrival the logical clocks completed (ArrivalClock).
  int64_t Progress() const;
  // After the state advanced (a commit, a logical clock's close): takes
  // the evaluation image of an evaluation point it reached (EvalImages).
  void ReachedProgress();
  // The evaluator's pull of an evaluation point the shard has reached:
  // from its image, then released.
  void ServeEvalPull(Message& msg);
  void ServeDeferredEvalPulls();
  void HandlePush(Message& msg);
  // Checks a push's ranges and frames against this shard and its header
  // and fills *record (all but its message).
  Status CheckPush(const Message& msg, BufferedPush* record) const;
  // Whether the restored round already holds `worker`'s push of `clock`
  // (see replay_floor_).
  bool AlreadyContained(uint32_t worker, int64_t clock);
  void SendPushAck(const std::string& peer, uint64_t id, int64_t clock,
                   wire::PushStatus status, int64_t staleness);
  Status ApplyCommit(const wire::Commit& commit);
  // Applies the batch-weighted mean of `pushes` as `step` (UpdateStep: a
  // whole step for a commit, a share of a logical clock for a push on
  // arrival). Leaves the store's step() and time() to the caller.
  Status ApplyPushes(const std::vector<const BufferedPush*>& pushes,
                     const UpdateStep& step);
  // Ends logical clock `number` - 1 on the dense range and the sparse rows
  // its shares touched (ArrivalClock's CloseFn).
  Status CloseLogicalClock(double lr, int64_t number);
  // ApplyPushes for one push that covers the whole dense range: its mean is
  // its own gradient, so the optimizer reads it straight from the frame
  // instead of going through the accumulator's zero, add and divide passes.
  Status ApplySinglePush(const BufferedPush& push, const UpdateStep& step);
  // ApplyPushes' general case: through the accumulators.
  Status ApplyMean(const std::vector<const BufferedPush*>& pushes,
                   const UpdateStep& step);
  // Typed views of a push's sparse ids and gradient rows (empty when it
  // has none), copied into the scratch vectors only when misaligned.
  struct SparseView {
    std::span<const uint64_t> ids;
    std::span<const float> grads;
  };
  StatusOr<SparseView> SparseRows(const BufferedPush& push,
                                  std::vector<uint64_t>* id_scratch,
                                  std::vector<float>* grad_scratch) const;
  // Apply-on-arrival: the push was admitted (ShardClock::Admit) and acked
  // before anything is applied, so the worker's next step overlaps the
  // apply. Nothing observes the difference: this one thread applies before
  // it serves any later request. Applies it as shares of the logical
  // clocks it lands in (ArrivalClock), its gradient weighed by its
  // staleness where the policy asks for it.
  void ApplyOnArrival(const BufferedPush& record, int64_t clock,
                      int64_t staleness);
  // Snapshot rounds (server_shard_snapshot.cc). The shard's thread freezes
  // a round (StartRound: a capture over its arrays, O(chunks)), writer_
  // copies and writes it in the background and signals round_fd_, and
  // FinishRound reports it to the coordinator.
  struct RoundReport {
    uint64_t round = 0;
    int64_t clock = 0;
    Status status;
    uint64_t bytes = 0;
    double freeze_ms = 0;
    double write_s = 0;
    uint64_t copied_on_apply = 0;
    std::map<uint32_t, int64_t> contained;
  };
  void OpenSnapshotStore();
  // Welcomed again (a rollback): the round in flight is abandoned (its
  // writer joined, its capture dropped) and the store closed.
  void DropSnapshotState();
  // After the stores are built: restores `round` of `shards` shards when
  // it is not 0 (a failure is also reported to the coordinator), opens the
  // snapshot store, and answers Restored in a recovery epoch.
  Status RestoreFromWelcome(uint64_t round, uint32_t shards);
  // Loads round `round` that `shards` shards wrote under the job's
  // snapshot_dir into this shard's (fresh) state.
  Status RestoreRound(uint64_t round, uint32_t shards);
  void StartRound(const wire::SnapshotStart& start);
  Status WriteRoundInBackground(const ShardRoundMeta& meta, uint64_t keep_from);
  void FinishRound();
  void SendSnapshotDone(const RoundReport& report);
  void JoinRoundWriter();
  void SendToWorker(const std::string& peer, zmq::message_t header,
                    std::vector<zmq::message_t> payloads = {});
  void SendToCoordinator(zmq::message_t header);
  void RejectBadMessage(const std::string& peer, const Status& why,
                        uint64_t request_id);

  ServerOptions options_;
  zmq::socket_t coordinator_;
  std::unique_ptr<DataPort> data_;
  std::string endpoint_;

  uint32_t shard_ = 0;
  JobConfig job_;
  KeyLayout layout_;
  ShardKeys keys_;  // this shard's keys, which requests are checked against
  bool on_arrival_ = false;
  ShardClock clock_;
  // Apply-on-arrival: the shard's progress in logical clocks.
  ArrivalClock arrival_;
  // The evaluator's reads (eval_images.h): images of the model at
  // evaluation points, and its pulls of points not reached yet.
  EvalImages eval_images_;
  bool warned_partial_clock_ = false;
  LrSchedule schedule_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<DenseStore> dense_;
  std::unique_ptr<SparseTable> sparse_;
  // Commit scratch, as large as the shard's range. A shard that needs new
  // arrays allocates it on a second thread (scratch_) while it restores and
  // serves its first pulls: fresh memory is slow to map on a VM, and
  // nothing needs it before the first apply (AwaitScratch; Internal when
  // the allocation failed).
  struct Scratch {
    WeightedAccumulator acc{0};
    std::vector<float> grad;
  };
  std::future<Scratch> scratch_;
  Status AwaitScratch();
  WeightedAccumulator dense_acc_{0};
  SparseAccumulator sparse_acc_;
  std::vector<float> dense_grad_;
  std::vector<uint64_t> sparse_ids_;
  std::vector<float> sparse_grad_;

  uint64_t bad_messages_ = 0;
  int64_t bad_log_budget_ = 20;
  // Recovery epoch (wire::Restored); data requests of another are dropped.
  uint32_t epoch_ = 0;
  uint64_t stale_dropped_ = 0;

  // Apply-on-arrival: per worker, the newest clock whose push is applied.
  std::map<uint32_t, int64_t> contained_;
  // After a restore: per worker, the newest clock the restored round holds.
  // A resumed worker may push such a clock again (it restarts where the
  // policy's clock table had it, which can be behind this shard's cut);
  // the push is acknowledged as applied and skipped, so every (worker,
  // clock) is in the model once. An entry goes once the worker pushes a
  // later clock.
  std::map<uint32_t, int64_t> replay_floor_;
  uint64_t replays_skipped_ = 0;
  static constexpr size_t kSnapshotChunkBytes = 1u << 20;
  std::unique_ptr<SnapshotStore> store_;
  std::string store_error_;  // why store_ could not be opened
  std::unique_ptr<SnapshotCapture> capture_;
  // The last finished capture, kept for its image buffers (a shard with
  // snapshots holds a second copy of its arrays, as any double buffer).
  std::unique_ptr<SnapshotCapture> spare_capture_;
  // Written by writer_ until it signals round_fd_, then read by this thread.
  RoundReport round_;
  int round_fd_ = -1;
  std::thread writer_;  // joined by ~ServerShard before anything it reads
  // Fault injection for tests (env LOCKSTEP_FAULT_ROUND_DELAY_MS): every
  // round's background write starts this late, so a test can kill a
  // server while its round is in flight. 0 (off) in production.
  int fault_round_delay_ms_ = 0;

  // On-arrival pushes of at least this many dense bytes are applied on
  // background_ while this thread receives the next message; smaller ones
  // are not worth a thread hand-off.
  static constexpr uint64_t kBackgroundApplyBytes = 1u << 20;
  // Every handler that touches the model calls background_.Wait() first.
  // Declared last: destroyed (joined) before the state its work uses.
  BufferedPush background_push_;  // the push background_ is applying
  BackgroundApply background_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SERVER_SHARD_H_
