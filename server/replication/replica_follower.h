// A backup range's side of replication (replica_stream.h): it follows its
// primary's feed (ReplicaFeed), acknowledges each step once received, and
// applies it to the range's state through the same code the primary ran,
// so the backup's model, optimizer state and clock hold the primary's
// bytes: a commit as the gradient the primary applied, a push applied on
// arrival at the staleness the primary measured, an adoption's drop of
// what was pending, or, for a backup that joins a running primary, the
// live copy of the whole state (RangeCopy). A feed that breaks (the
// primary is gone) is reported to the coordinator (Error PrimaryLost).
// Thread-safety: the server's thread, as the range it applies to.
#ifndef LOCKSTEP_SERVER_REPLICATION_REPLICA_FOLLOWER_H_
#define LOCKSTEP_SERVER_REPLICATION_REPLICA_FOLLOWER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/status.h"
#include "common/wire/message.h"
#include "server/model/shard_model.h"
#include "server/replication/replica_feed.h"
#include "server/shard/shard_clock.h"
#include "server/shard/shard_data_path.h"
#include "server/shard/shard_updater.h"

namespace lockstep {

class ReplicaFollower {
 public:
  using Tell = std::function<void(zmq::message_t)>;
  // The range's parts and its timeline's job and layout, owned by it and
  // outliving this; `tell` sends a header to the coordinator.
  struct Range {
    uint32_t shard = 0;
    ShardModel* model = nullptr;
    ShardClock* clock = nullptr;
    ShardUpdater* updater = nullptr;
    ShardDataPath* data_path = nullptr;
    const JobConfig* job = nullptr;
    const KeyLayout* layout = nullptr;
  };
  ReplicaFollower(Range range, Tell tell)
      : shard_(range.shard),
        model_(range.model),
        clock_(range.clock),
        updater_(range.updater),
        data_path_(range.data_path),
        job_(range.job),
        layout_(range.layout),
        tell_(std::move(tell)) {}

  // Follows the primary at `primary`, as the server at `own`.
  void Follow(const std::string& primary, const std::string& own,
              double timeout_s);
  // Stops following (a promotion, a new timeline).
  void Stop() { feed_.reset(); }
  // The feed, to poll once connected (null: none).
  ReplicaFeed* feed() { return feed_.get(); }
  // Applies the steps the feed has and acknowledges them. A lost primary
  // ends the feed (the coordinator promotes or rolls back).
  Status TakeSteps();
  // Applies one step the feed read (ReplicaFeed::ReadStep): a live copy,
  // or the push or commit `original` carries. Errors: a malformed step, or
  // an apply that failed (the backup no longer matches its primary).
  Status ApplyStep(Message& step, Message& original);
  uint64_t steps_applied() const { return steps_applied_; }
  // The primary's push-norm outlier scale as of the last step or install
  // applied (0: unknown), for this copy to bound pushes by once promoted.
  double norm_scale() const { return norm_scale_; }

 private:
  // Applies `step`, which carries `original` (the primary's Push or
  // Commit, with its payloads). Errors: a malformed step, or an apply
  // that failed (the backup no longer matches its primary).
  Status Apply(const wire::Replicate& step, Message& original);
  Status ApplyCommit(const wire::Replicate& step, const Message& original);
  Status ApplyPush(const wire::Replicate& step, Message& original);
  // The state its primary copied (a joining backup's first step).
  Status Install(const std::vector<zmq::message_t>& frames);

  const uint32_t shard_;
  ShardModel* model_;
  ShardClock* clock_;
  ShardUpdater* updater_;
  ShardDataPath* data_path_;
  const JobConfig* job_;
  const KeyLayout* layout_;
  Tell tell_;
  std::unique_ptr<ReplicaFeed> feed_;
  uint64_t steps_applied_ = 0;  // of this feed
  double norm_scale_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_REPLICATION_REPLICA_FOLLOWER_H_
