// A backup's feed of its shard's steps from the primary (--replicas; see
// replica_stream.h): a connection to the primary's data port, made on a
// thread of its own (two servers that back each other up connect to each
// other at once, and each must keep serving the other's handshake), then
// a subscription, the steps in order, and acknowledgements of those
// received (held: the backup applies each before anything else). Steps a
// resubscription sends again are skipped.
// Thread-safety: the server's thread, but for the connecting thread it
// starts and joins.
#ifndef LOCKSTEP_SERVER_REPLICATION_REPLICA_FEED_H_
#define LOCKSTEP_SERVER_REPLICATION_REPLICA_FEED_H_

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "common/status.h"
#include "common/transport/data_channel.h"
#include "common/wire/message.h"

namespace lockstep {

class ReplicaFeed {
 public:
  // Starts connecting to the primary of `shard` at `primary`; this
  // server's data endpoint `own` names the subscription.
  ReplicaFeed(uint32_t shard, std::string primary, std::string own,
              double timeout_s);
  ~ReplicaFeed();
  ReplicaFeed(const ReplicaFeed&) = delete;
  ReplicaFeed& operator=(const ReplicaFeed&) = delete;

  // Whether the connection is up and subscribed (checked each turn; a
  // failed connect is an error).
  StatusOr<bool> Ready();
  zmq::pollitem_t PollItem() { return channel_->PollItem(); }
  // The next new step: its Replicate body in `step`, its own message (the
  // Push or Commit) verified in `original` (an Install's frames stay in
  // `step`; `original` is then empty). False when none is queued.
  // Errors: the primary is gone, or sent a malformed step.
  StatusOr<bool> Next(Message* step, Message* original);
  // Reads `step`, a message received on shard `shard`'s feed after step
  // `*applied`, as Next does: a new step (true; *applied advanced) or one
  // held already (false). Errors: a malformed step, one out of order, an
  // Error from the primary.
  static StatusOr<bool> ReadStep(uint32_t shard, uint64_t* applied,
                                 Message* step, Message* original);
  // Acknowledges every step Next returned as held (once per turn): the
  // backup applies each before anything else.
  Status AckHeld();
  uint64_t applied() const { return applied_; }
  const std::string& primary() const { return primary_; }

 private:
  const uint32_t shard_;
  const std::string primary_;
  const std::string own_;
  std::future<StatusOr<std::unique_ptr<DataChannel>>> connecting_;
  std::unique_ptr<DataChannel> channel_;
  Status failed_;  // a connect that failed
  uint64_t applied_ = 0;
  uint64_t acked_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_REPLICATION_REPLICA_FEED_H_
