// One key range a server process holds: its model and optimizer state
// (ShardModel), the commit path (ShardClock, ShardUpdater), the evaluator's
// images (EvalImages), snapshot rounds (ShardRounds) and the workers' data
// path (ShardDataPath). Built from a Welcome (fresh, restored from a round,
// or adopted at its commit by a resumed coordinator), then driven by the
// server process (ServerProcess): commits, rounds, data messages.
// Under --replicas a range is held as its primary, which serves workers,
// writes rounds and streams every step to the range's backups
// (PrimaryReplicas), or as a backup, which applies its primary's steps
// (ReplicaFeed) in the primary's order and so holds the same bytes, and
// which the coordinator promotes when the primary is lost.
// Thread-safety: the server's thread only (its data path may apply a push
// on a background thread; WaitForApply before reading the state).
#ifndef LOCKSTEP_SERVER_HOSTED_SHARD_H_
#define LOCKSTEP_SERVER_HOSTED_SHARD_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/status.h"
#include "common/transport/data_port.h"
#include "common/wire/message.h"
#include "server/model/shard_model.h"
#include "server/replication/primary_replicas.h"
#include "server/replication/replica_feed.h"
#include "server/replication/replica_follower.h"
#include "server/shard/eval_images.h"
#include "server/shard/shard_clock.h"
#include "server/shard/shard_data_path.h"
#include "server/shard/shard_rounds.h"
#include "server/shard/shard_updater.h"

namespace lockstep {

class HostedShard {
 public:
  // What a Welcome gives every key range a server holds.
  struct Timeline {
    JobConfig job;
    KeyLayout layout;
    uint32_t epoch = 0;  // recovery epoch; data requests of another drop
  };
  using Tell = std::function<void(zmq::message_t)>;

  // Replies go out on `port`; `tell_coordinator` sends a header to the
  // coordinator. Both outlive this.
  HostedShard(uint32_t shard, DataPort* port, Tell tell_coordinator);
  ~HostedShard() = default;
  HostedShard(const HostedShard&) = delete;
  HostedShard& operator=(const HostedShard&) = delete;

  uint32_t shard() const { return shard_; }
  // The last clock applied (a background apply finished first).
  int64_t applied() {
    data_path_.WaitForApply();
    return clock_.applied();
  }
  bool on_arrival() const { return clock_.on_arrival(); }
  bool primary() const { return primary_; }
  // The workers' (and the evaluator's) data path: their messages, fences,
  // what it counted.
  ShardDataPath& data_path() { return data_path_; }
  const ShardDataPath& data_path() const { return data_path_; }

  // A first or a rollback's Welcome: builds the model, restores its
  // restore_round when not 0 (a failure is also told to the coordinator),
  // and, as a primary, answers Restored in a recovery epoch.
  Status Setup(const wire::Welcome& welcome, Timeline timeline, bool primary);
  // A resumed coordinator's Welcome that keeps this state at its
  // adopt_clock under `timeline`: a primary drops what was pending for
  // later clocks; a backup (holding no pushes under a commit policy, the
  // only kind adopted) takes the timeline, its state following its
  // primary's steps as before.
  Status Adopt(const wire::Welcome& welcome, Timeline timeline);

  // A primary: its backups are on the servers at `backups` now; new ones
  // are `joining` a running stream (they start from a live copy) unless
  // they start from the same Welcome as this primary.
  void ServeReplicas(const std::vector<std::string>& backups, bool joining);
  // A backup's side: it follows a primary (Follow), polls its feed and
  // applies the steps it has (TakeSteps); a lost primary ends the feed
  // (the coordinator promotes or rolls back).
  ReplicaFollower& follower() { return follower_; }
  // A backup whose primary is lost serves the range from now on, with the
  // backups at `backups`; tells the coordinator (Promoted).
  Status Promote(const std::vector<std::string>& backups);
  // A primary: a backup's acknowledgement or subscription from `peer`.
  Status HandleReplicaAck(const std::string& peer, const wire::ReplicaAck& ack);

  // Applies a commit (`commit`, a Commit message), streams it to the
  // backups and tells the coordinator (Committed); then answers the pulls
  // it made ready.
  Status Commit(const Message& commit);
  // A promoted range's commit held for its workers' pushes sent again:
  // applied once they are all here (or after kRepushWaitS without some).
  Status RetryDeferredCommit();
  void StartRound(const wire::SnapshotStart& start);
  // Readable once a round in flight is written (-1: none opened).
  int rounds_fd() const { return rounds_.fd(); }
  // After rounds_fd() was readable: reports the finished round.
  void FinishRound();

  // What the state holds, for the log at the end: the optimizer's steps
  // (on arrival: one per push applied), the clock, the pushes dropped.
  std::string Totals();

 private:
  // The data path's settings for the timeline of now; `from_start`: this
  // range serves the job from its first clock (its outlier bound learns
  // the scale from the pushes); `scale`: the scale it had (an adoption
  // keeps it; 0: none).
  void ConfigureDataPath(bool on_arrival, bool from_start, double scale = 0);
  Status RestoreFromWelcome(uint64_t round, uint32_t shards);
  void SendSnapshotDone(const ShardRounds::Report& report);
  // A round's description of the state now.
  ShardRoundMeta RoundMeta(uint64_t round, int64_t clock) const;
  // A primary: the state now, for a joining backup (RangeCopy).
  StatusOr<Message> LiveCopy();
  // Only a primary speaks for its range.
  void TellCoordinator(zmq::message_t header) {
    if (primary_) tell_coordinator_(std::move(header));
  }
  void SendCommitted(int64_t clock, uint32_t pushes);
  // The workers `commit` names whose push is not buffered (nor refused).
  std::vector<uint32_t> MissingPushes(const wire::Commit& commit);

  const uint32_t shard_;
  DataPort* port_;
  Tell tell_coordinator_;
  bool primary_ = true;
  Timeline now_;
  ShardClock clock_;
  EvalImages eval_images_;
  // Declared in the order they are built on: each is destroyed before
  // what it uses (the rounds' writer reads the model's arrays; the data
  // path's background apply writes them).
  ShardModel model_;
  ShardUpdater updater_{&model_, &clock_, &eval_images_};
  ShardRounds rounds_;
  ShardDataPath data_path_;
  ReplicaFollower follower_{{shard_, &model_, &clock_, &updater_, &data_path_,
                             &now_.job, &now_.layout},
                            tell_coordinator_};  // a backup's, until promoted
  PrimaryReplicas replicas_{
      {shard_, port_, &model_, &clock_, &data_path_},
      [this](int64_t clock, uint32_t pushes) { SendCommitted(clock, pushes); }};
  // Promoted under a commit policy: the first commit may wait for pushes.
  static constexpr double kRepushWaitS = 10;
  bool awaiting_repush_ = false;
  bool promoted_ = false;  // a backup once, this timeline
  std::optional<Message> deferred_commit_;
  double deferred_since_s_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_HOSTED_SHARD_H_
