// A range's live copy for a backup that joins a running primary (it
// replaces a lost one; replica_stream.h): the primary freezes its model's
// arrays (SnapshotCapture, copied at once: the state is only changed by
// this thread), writes them as a full snapshot round into a MemoryStore
// and sends the store's records packed in one frame; the backup loads them
// into a MemoryStore of its own and restores its range from that round
// (RestoreOwnPart), through the same code and checksums as a restore from
// disk. Under a commit policy the state between commits is the model
// alone (pushes are buffered, not applied), so the copy is bit-exact.
// Thread-safety: the range's thread.
#ifndef LOCKSTEP_SERVER_REPLICATION_RANGE_COPY_H_
#define LOCKSTEP_SERVER_REPLICATION_RANGE_COPY_H_

#include <vector>
#include <zmq.hpp>

#include "common/layout.h"
#include "common/status.h"
#include "server/model/shard_model.h"
#include "server/snapshot/shard_restore.h"
#include "snapshot_format/shard_round_meta.h"

namespace lockstep {

class RangeCopy {
 public:
  // The round number a copy is stored as.
  static constexpr uint64_t kRound = 1;

  // The copy of `model` now, described by `meta` (its round is set to
  // kRound): the store's records packed in one frame (a key's length, the
  // key, a value's length, the value; lengths u32 and u64).
  static StatusOr<std::vector<zmq::message_t>> Take(const ShardModel& model,
                                                    ShardRoundMeta meta);
  // Loads a copy's `frames` into `model` (built for shard `shard` of
  // `layout`). Errors: malformed frames, a bad checksum, another range.
  static StatusOr<RestoredShard> Install(
      const std::vector<zmq::message_t>& frames, const KeyLayout& layout,
      uint32_t shard, const std::string& optimizer, ShardModel* model);
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_REPLICATION_RANGE_COPY_H_
