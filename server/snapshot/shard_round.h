// A shard's snapshot round as it goes to and comes from a SnapshotStore:
// the meta record (snapshot/shard_round_meta.h) and the arrays of a
// SnapshotCapture, each cut into the capture's chunks.
// Thread-safety: pure functions over their arguments.
#ifndef LOCKSTEP_SERVER_SNAPSHOT_SHARD_ROUND_H_
#define LOCKSTEP_SERVER_SNAPSHOT_SHARD_ROUND_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "server/snapshot/snapshot_capture.h"
#include "server/store/snapshot_store.h"
#include "snapshot/shard_round_meta.h"

namespace lockstep {

// Writes `capture` (Done) as round meta.round of `store`: its arrays in
// name order, cut at capture.chunk_bytes(), then the meta with arrays and
// chunk_bytes filled in, committed atomically.
// REQUIRES: capture.Done().
Status WriteShardRound(SnapshotStore& store, ShardRoundMeta meta,
                       const SnapshotCapture& capture);

// A round read back whole, every chunk verified.
struct ShardRound {
  ShardRoundMeta meta;
  std::map<std::string, std::string> arrays;  // name -> bytes
};
// NotFound for a round not stored; Corruption naming the chunk for a bad
// checksum, a missing chunk or sizes that disagree with the meta.
StatusOr<ShardRound> ReadShardRound(const SnapshotStore& store, uint64_t round);

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SNAPSHOT_SHARD_ROUND_H_
