// A shard's snapshot round as it goes to and comes from a SnapshotStore:
// the meta record (snapshot/shard_round_meta.h) and the arrays of a
// SnapshotCapture, each cut into the capture's chunks. A round is full, or
// incremental: only what changed since its parent round of the same store
// (the dense chunks whose bytes changed, the sparse rows that changed or
// are new), read back by following its chain of parents to a full round
// (server/snapshot/round_chain.h).
// Thread-safety: pure functions over their arguments.
#ifndef LOCKSTEP_SERVER_SNAPSHOT_SHARD_ROUND_H_
#define LOCKSTEP_SERVER_SNAPSHOT_SHARD_ROUND_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "server/model/snapshot_capture.h"
#include "server/store/snapshot_store.h"
#include "snapshot_format/shard_round_meta.h"

namespace lockstep {

// Writes `capture` (Done) as round meta.round of `store`: its arrays in
// name order, cut at capture.chunk_bytes(), then the meta with arrays and
// chunk_bytes filled in, committed atomically. With meta.parent != 0 the
// round is incremental, holding only what the capture found changed; the
// capture must have compared against the image of round meta.parent, as
// stored. An incremental round that would hold more than half of a full
// one's bytes is written full instead (its restore then reads less).
// `written`, when given, receives the meta as committed.
// REQUIRES: capture.Done().
Status WriteShardRound(SnapshotStore& store, ShardRoundMeta meta,
                       const SnapshotCapture& capture,
                       ShardRoundMeta* written = nullptr);

// A round read back whole, every chunk verified.
struct ShardRound {
  ShardRoundMeta meta;
  std::map<std::string, std::string> arrays;  // name -> bytes
};
// The round's state, resolved through its chain of parents: arrays whole,
// as a full round of the same state would hold them (the meta's arrays
// describe them so; meta.parent still says how it was stored). NotFound
// for a round not stored; Corruption naming the chunk for a bad checksum,
// a missing chunk, a missing parent or sizes that disagree with the meta.
StatusOr<ShardRound> ReadShardRound(const SnapshotStore& store, uint64_t round);

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SNAPSHOT_SHARD_ROUND_H_
