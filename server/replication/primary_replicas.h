// A primary's side of its range's backups (--replicas): the stream of
// every step it applies (ReplicaStream, which the data path writes its
// on-arrival pushes to), the commits its backups may not hold yet, and the
// newest commit pulls may read. Under a commit policy a commit is reported
// Committed to the coordinator, and readable by pulls, only once every
// backup holds it: a promoted backup then has every clock the job counted.
// Thread-safety: not thread-safe; the server's thread.
#ifndef LOCKSTEP_SERVER_REPLICATION_PRIMARY_REPLICAS_H_
#define LOCKSTEP_SERVER_REPLICATION_PRIMARY_REPLICAS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/transport/data_port.h"
#include "common/wire/message.h"
#include "server/model/shard_model.h"
#include "server/replication/replica_stream.h"
#include "server/shard/shard_clock.h"
#include "server/shard/shard_data_path.h"

namespace lockstep {

class PrimaryReplicas {
 public:
  // The range the backups copy; every pointer outlives this.
  struct Range {
    uint32_t shard = 0;
    DataPort* port = nullptr;
    ShardModel* model = nullptr;
    ShardClock* clock = nullptr;
    ShardDataPath* data_path = nullptr;
  };
  // Tells the coordinator a commit is applied (Committed).
  using Committed = std::function<void(int64_t clock, uint32_t pushes)>;

  PrimaryReplicas(Range range, Committed committed)
      : range_(range), committed_(std::move(committed)) {}

  // Whether the range streams to backups now.
  bool active() const { return stream_ != nullptr; }
  // A new timeline: the stream ends and the data path streams no more.
  void Stop();
  // The backups are on the servers at `backups` now; new ones are
  // `joining` a running stream (they start from a live copy) unless they
  // start from the same Welcome as this primary. The first call starts
  // the stream from the state now.
  void Serve(const std::vector<std::string>& backups, bool joining);
  // Streams commit `msg`, just applied (the gradient of its `pushes`
  // pushes); Committed once every backup holds it. Only when active().
  void RecordCommit(const Message& msg, uint32_t pushes);
  // A backup's acknowledgement or subscription from `peer`; a joining
  // backup gets `copy()`. Only when active().
  Status HandleAck(const std::string& peer, const wire::ReplicaAck& ack,
                   const std::function<StatusOr<Message>()>& copy);

 private:
  // Lets pulls read up to the newest commit every backup holds, and tells
  // the coordinator those commits are applied.
  void AdvanceReadable();

  struct CommitStep {
    uint64_t seq = 0;
    int64_t clock = 0;
    uint32_t pushes = 0;  // for its Committed
  };
  Range range_;
  Committed committed_;
  std::unique_ptr<ReplicaStream> stream_;
  std::deque<CommitStep> commit_steps_;
  int64_t readable_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_REPLICATION_PRIMARY_REPLICAS_H_
