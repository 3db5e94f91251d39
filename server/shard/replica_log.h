// What a shard's data path tells its backups (--replicas): each push it
// applies on arrival, and replies that must wait until every backup holds
// that push (so a promoted backup loses none). The data path calls it;
// replication implements it (server/replication/replica_stream.h), so the
// shard layer never reaches up into replication.
// Thread-safety: as the implementation's; the shard's thread.
#ifndef LOCKSTEP_SERVER_SHARD_REPLICA_LOG_H_
#define LOCKSTEP_SERVER_SHARD_REPLICA_LOG_H_

#include <cstdint>

#include "common/wire/message.h"

namespace lockstep {

class ReplicaLog {
 public:
  virtual ~ReplicaLog() = default;
  // Records push `push` (its frames are shared, not copied), applied on
  // arrival with `status` and `staleness`, and the push-norm outlier scale
  // after it (0: unknown). Returns the step's number.
  virtual uint64_t RecordPush(const Message& push, wire::PushStatus status,
                              int64_t staleness, double norm_scale) = 0;
  // Sends `reply` (to its peer) once every backup holds step `seq`: now,
  // when they do.
  virtual void SendWhenHeld(uint64_t seq, Message reply) = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_REPLICA_LOG_H_
