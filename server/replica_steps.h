// What a backup does with its primary's steps (replica_stream.h): each
// is applied to the range's state through the same code the primary ran,
// so the backup's model, optimizer state and clock hold the primary's
// bytes. A commit arrives as the gradient the primary applied; a push
// applied on arrival with the staleness the primary measured; an adoption
// drops what was pending.
// Thread-safety: the server's thread, as the range it applies to.
#ifndef LOCKSTEP_SERVER_REPLICA_STEPS_H_
#define LOCKSTEP_SERVER_REPLICA_STEPS_H_

#include "common/status.h"
#include "common/wire/message.h"
#include "server/shard_clock.h"
#include "server/shard_data_path.h"
#include "server/shard_updater.h"

namespace lockstep {

class ReplicaSteps {
 public:
  // The range's parts, owned by it and outliving this.
  ReplicaSteps(ShardClock* clock, ShardUpdater* updater,
               ShardDataPath* data_path)
      : clock_(clock), updater_(updater), data_path_(data_path) {}

  // Applies `step`, which carries `original` (the primary's Push, Commit
  // or Welcome, with its payloads). Errors: a malformed step, or an apply
  // that failed (the backup no longer matches its primary).
  Status Apply(const wire::Replicate& step, Message& original);

 private:
  Status ApplyCommit(const wire::Replicate& step, const Message& original);
  Status ApplyPush(const wire::Replicate& step, Message& original);

  ShardClock* clock_;
  ShardUpdater* updater_;
  ShardDataPath* data_path_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_REPLICA_STEPS_H_
