// A shard's snapshot round as it goes to and comes from a SnapshotStore:
// the meta record (schemas/snapshot.fbs: clock, layout, job, optimizer
// step, what the state contains, the arrays' sizes) and the arrays of a
// SnapshotCapture, each cut into the capture's chunks.
// Thread-safety: pure functions over their arguments.
#ifndef LOCKSTEP_SERVER_SNAPSHOT_SHARD_ROUND_H_
#define LOCKSTEP_SERVER_SNAPSHOT_SHARD_ROUND_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/status.h"
#include "server/snapshot/snapshot_capture.h"
#include "server/store/snapshot_store.h"

namespace lockstep {

// Version of the stored meta; a round of another format is refused.
inline constexpr uint32_t kShardRoundFormat = 1;

struct ShardRoundMeta {
  uint64_t round = 0;
  int64_t clock = 0;  // the committed clock the state is right after
  uint32_t shard = 0;
  KeyLayout layout;  // the layout the round was taken under
  JobConfig job;
  std::string optimizer;
  int state_slots = 0;
  int64_t step = 0;  // updates applied so far
  double time = 0;   // clocks' worth of them (DenseStore::time)
  uint64_t sparse_rows = 0;
  uint64_t chunk_bytes = 0;
  struct Array {
    std::string name;
    uint64_t bytes = 0;
    uint32_t chunks = 0;
  };
  std::vector<Array> arrays;  // by name, as stored
  // Apply-on-arrival policies: per worker, the newest clock whose push the
  // state contains.
  std::map<uint32_t, int64_t> contained;
  double unix_time = 0;  // when the round was frozen
};

std::string EncodeShardRoundMeta(const ShardRoundMeta& meta);
// Corruption when `bytes` is not a verifiable meta record, or of another
// format; InvalidArgument when its job or layout does not validate.
StatusOr<ShardRoundMeta> DecodeShardRoundMeta(std::string_view bytes);

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
