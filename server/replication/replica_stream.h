// A primary's stream of its shard's steps to its backups (--replicas):
// every commit it applies (as the gradient it applied), every push it
// applies on arrival (with its answer), in the order it applies them,
// numbered 1, 2, ... A backup
// subscribes over the primary's data port (ReplicaAck with seq 0, naming
// its server's endpoint) and acknowledges the steps it has applied. The
// stream keeps each step until every backup the shard has holds it, and
// holds replies until then (SendWhenHeld): a push answered on arrival is
// on every backup, so a promoted backup loses none. A backup not
// subscribed yet gets every kept step once it does.
// Replies go out through the port, which never blocks: two servers that
// back each other up cannot wait on each other.
// Thread-safety: not thread-safe; the server's thread.
#ifndef LOCKSTEP_SERVER_REPLICATION_REPLICA_STREAM_H_
#define LOCKSTEP_SERVER_REPLICATION_REPLICA_STREAM_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/transport/data_port.h"
#include "common/wire/message.h"
#include "server/shard/replica_log.h"

namespace lockstep {

class ReplicaStream : public ReplicaLog {
 public:
  // The stream of shard `shard`, sent on `port` (outlives this).
  ReplicaStream(uint32_t shard, DataPort* port) : shard_(shard), port_(port) {}

  // The data endpoints of the servers holding the shard's backups now
  // (Welcome, Promote): a backup no longer listed is not waited for. A
  // new one `joining` a running stream (it replaces a lost backup) starts
  // from a live copy of the state and is not waited for until it has
  // installed it; one that is not joining starts from the same state as
  // this primary (the same Welcome) and is waited for from step 1.
  void Expect(const std::vector<std::string>& backups, bool joining);
  size_t backups() const { return expected_.size(); }

  // Records one step carrying `original` (its frames are shared, not
  // copied) and the primary's push-norm outlier scale after it (0:
  // unknown), and sends it to every subscribed backup. Returns its number.
  uint64_t Record(wire::ReplicaStep step, const Message& original,
                  wire::PushStatus status = wire::PushStatus::Buffered,
                  int64_t staleness = 0, uint32_t pushes = 0,
                  double norm_scale = 0);
  // The newest step every backup holds.
  uint64_t HeldByAll() const;
  // Sends `reply` (to its peer) once every backup holds step `seq`: now,
  // when they do.
  void SendWhenHeld(uint64_t seq, Message reply) override;
  // ReplicaLog: a push applied on arrival, as a Push step.
  uint64_t RecordPush(const Message& push, wire::PushStatus status,
                      int64_t staleness, double norm_scale) override {
    return Record(wire::ReplicaStep::Push, push, status, staleness, 0,
                  norm_scale);
  }
  // A backup's ReplicaAck from `peer`. A joining backup's subscription is
  // answered with `copy()` (the state now, as an Install step's payloads).
  // Errors: an endpoint that holds no backup of this shard, a backup
  // acknowledging a step never sent, copy's.
  Status HandleAck(const std::string& peer, const wire::ReplicaAck& ack,
                   const std::function<StatusOr<Message>()>& copy);
  // The newest step recorded.
  uint64_t last() const { return next_seq_ - 1; }

  // Steps kept for a backup that does not hold them yet.
  size_t kept() const { return kept_.size(); }

 private:
  struct Backup {
    std::string peer;  // empty until it subscribes
    uint64_t held = 0;
    // Joining: not waited for until it holds install_seq (its copy).
    bool joining = false;
    uint64_t install_seq = 0;
  };
  struct Step {
    uint64_t seq = 0;
    zmq::message_t header;  // the Replicate envelope
    Message original;
  };

  // Forgets the steps every backup holds; sends the replies waiting on
  // them.
  void Release();
  void Send(const std::string& peer, Step& step);

  const uint32_t shard_;
  DataPort* port_;
  uint64_t next_seq_ = 1;
  std::map<std::string, Backup> expected_;  // by data endpoint
  std::deque<Step> kept_;
  std::deque<std::pair<uint64_t, Message>> replies_;  // by seq
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_REPLICATION_REPLICA_STREAM_H_
