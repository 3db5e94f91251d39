// A shard's data path: the workers' pulls and pushes on its data port.
// Each request is checked (epoch, sender, key ranges, frames) before it
// touches anything. A pull is answered from the live state once its clock
// may be read (ShardClock defers it until then), or, for the evaluator,
// from the image of its evaluation point (EvalImages). A push is buffered
// for its clock's commit, or admitted and applied on arrival
// (ShardUpdater); large on-arrival pushes are applied on a background
// thread while the next message is received.
// Thread-safety: the shard's thread only; WaitForApply() must be called
// before anything else reads or changes the model.
#ifndef LOCKSTEP_SERVER_SHARD_SHARD_DATA_PATH_H_
#define LOCKSTEP_SERVER_SHARD_SHARD_DATA_PATH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/status.h"
#include "common/transport/data_port.h"
#include "common/wire/message.h"
#include "server/guard/push_guard.h"
#include "server/guard/push_ledger.h"
#include "server/guard/request_rules.h"
#include "server/model/shard_model.h"
#include "server/shard/background_apply.h"
#include "server/shard/eval_images.h"
#include "server/shard/replica_log.h"
#include "server/shard/shard_clock.h"
#include "server/shard/shard_keys.h"
#include "server/shard/shard_updater.h"

namespace lockstep {

class ShardDataPath {
 public:
  // What the requests are checked against, set at every (re)welcome.
  struct Job {
    uint32_t shard = 0;
    uint32_t workers = 0;
    uint32_t epoch = 0;  // recovery epoch; requests of another are dropped
    uint32_t sparse_dim = 0;
    bool on_arrival = false;
    ShardKeys keys;
    PushGuard::Rules guard;
    uint64_t max_batch = 0;  // JobConfig::MaxPushBatch; 0: any (RequestRules)
    // With job keys: what admissions and verdicts are sealed with.
    std::shared_ptr<const FactSeal> seal = nullptr;
    uint32_t shards = 1;  // the job's shard count
  };

  // The objects it serves from, owned by the shard and outliving this.
  // `tell_coordinator` sends a header to the coordinator (a refusal's
  // report).
  ShardDataPath(DataPort* port, ShardModel* model, ShardClock* clock,
                EvalImages* images, ShardUpdater* updater,
                std::function<void(zmq::message_t)> tell_coordinator)
      : port_(port),
        model_(model),
        clock_(clock),
        images_(images),
        updater_(updater),
        tell_coordinator_(std::move(tell_coordinator)) {}

  void Configure(Job job) {
    guard_ = PushGuard(job.guard);
    rules_.Configure({job.epoch, job.on_arrival, job.max_batch, job.shard,
                      job.seal, job.shards > 1});
    job_ = std::move(job);
    held_ = false;
  }
  // Until the next Configure every request is dropped: the range holds no
  // state to serve (its round failed to restore, and the coordinator's
  // next welcome, or the job's end, is awaited).
  void Hold() { held_ = true; }
  // Serves one message from the data port.
  void Handle(Message& msg);
  // After the state advanced (a commit): answers the pulls now ready, the
  // evaluator's too.
  void ServeDeferredPulls();
  // Waits for an on-arrival push being applied in the background.
  void WaitForApply() { background_.Wait(); }
  uint64_t bad_messages() const { return bad_messages_; }
  const PushGuard& guard() const { return guard_; }
  // The outlier bound's scale (PushGuard::Scale); 0 when unknown.
  double norm_scale() const { return guard_.Scale().value_or(0); }
  // Bounds pushes by the scale another copy of the range knew
  // (PushGuard::SeedScale), until the next Configure.
  void SeedNormScale(double scale) { guard_.SeedScale(scale); }
  // A primary with backups streams every push it applies on arrival to
  // `log` and answers it once its backups hold it (null: no backups).
  // Outlives its use.
  void set_replicas(ReplicaLog* log) { replicas_ = log; }
  // The answer to each worker's last push (a backup keeps it from the
  // steps it applies).
  PushLedger& ledger() { return ledger_; }
  // Worker `worker`'s registration `incarnation` was removed: its
  // requests are refused (RequestRules).
  void Fence(uint32_t worker, uint32_t incarnation) {
    rules_.Fence(worker, incarnation);
  }
  // A new timeline (a rollback, or a resumed coordinator that kept the
  // state): no push is a repeat or a duplicate of one before.
  void ForgetPushes() {
    ledger_.Clear();
    rules_.Forget();
  }
  // Checks a push's ranges and frames against this shard and its header
  // and fills *record (all but its message).
  Status CheckPush(const Message& msg, BufferedPush* record) const;

 private:
  void HandlePull(Message& msg);
  // Answers a pull from the live state, or from `image` (an evaluation
  // point's) when not null.
  void ServePull(Message& msg, const EvalImages::Image* image);
  // The evaluator's pull of an evaluation point the shard has reached:
  // from its image, then released.
  void ServeEvalPull(Message& msg);
  void HandlePush(Message& msg);
  // On arrival: admits (or skips, or drops) a checked push and applies it.
  void AdmitAndApply(Message& msg, BufferedPush record);
  // On arrival: streams the push `msg`, answered `answer`, to the backups;
  // its step's number (0: no backups).
  uint64_t Stream(const Message& msg, const PushLedger::Answer& answer);
  // Checks the push's values (PushGuard); a refused one is answered,
  // reported and, on commit, marked for its clock. True when accepted.
  bool GuardPush(Message& msg);
  // Answers a push that broke `refusal`'s rule (RequestRules) and reports
  // it to the coordinator.
  void RefusePush(const Message& msg, const RequestRules::Refusal& refusal);
  // `after_step`: sent once the backups hold that replica step (0: now).
  // `verdict_seal`: RequestRules::SealVerdict's.
  void SendPushAck(const std::string& peer, uint64_t id, int64_t clock,
                   wire::PushStatus status, int64_t staleness,
                   const std::string& reason = "", uint64_t after_step = 0,
                   std::string_view verdict_seal = {});
  // `lends_first`: the first payload borrows the weights
  // (DataPort::SendLending).
  void SendToWorker(const std::string& peer, zmq::message_t header,
                    std::vector<zmq::message_t> payloads = {},
                    bool lends_first = false);
  void RejectBadMessage(const std::string& peer, const Status& why,
                        uint64_t request_id);

  DataPort* port_;
  ShardModel* model_;
  ShardClock* clock_;
  EvalImages* images_;
  ShardUpdater* updater_;
  std::function<void(zmq::message_t)> tell_coordinator_;
  Job job_;
  PushGuard guard_;
  PushLedger ledger_;
  ReplicaLog* replicas_ = nullptr;
  uint64_t bad_messages_ = 0;
  RequestRules rules_;
  int64_t bad_log_budget_ = 20;
  bool held_ = false;
  uint64_t held_dropped_ = 0;
  uint64_t stale_dropped_ = 0;

  // On-arrival pushes of at least this many dense bytes are applied on
  // background_ while this thread receives the next message; smaller ones
  // are not worth a thread hand-off.
  static constexpr uint64_t kBackgroundApplyBytes = 1u << 20;
  // A worker's pulls deferred at once, at most (an honest one waits on one).
  static constexpr size_t kMaxDeferredPulls = 4;
  // Declared last: destroyed (joined) before the push its work reads.
  BufferedPush background_push_;  // the push background_ is applying
  BackgroundApply background_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_SHARD_DATA_PATH_H_
