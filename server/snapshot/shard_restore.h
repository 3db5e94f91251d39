// Restore: loads one shard's parameters and optimizer state from a round
// that any number of shards wrote. Each old shard contributes the dense
// keys and sparse ids the new shard owns, so a round taken with S servers
// restores onto S' servers (re-sharding on load).
// Thread-safety: pure function over its arguments.
#ifndef LOCKSTEP_SERVER_SNAPSHOT_SHARD_RESTORE_H_
#define LOCKSTEP_SERVER_SNAPSHOT_SHARD_RESTORE_H_

#include <cstdint>
#include <map>
#include <vector>

#include "common/layout.h"
#include "common/status.h"
#include "server/model/dense_store.h"
#include "server/model/sparse_table.h"
#include "server/snapshot/shard_round.h"
#include "server/store/snapshot_store.h"

namespace lockstep {

struct RestoredShard {
  int64_t clock = 0;  // the committed clock the round is right after
  // Updates applied and the clocks' worth of them (DenseStore::step,
  // time): this shard's own source's with the round's layout (each shard
  // froze at its own progress under apply-on-arrival), else the largest
  // among the sources.
  int64_t step = 0;
  double time = 0;
  // Apply-on-arrival rounds: per worker, the newest clock whose push the
  // restored state contains. With the round's own layout that is this
  // shard's source's cut; re-sharded, the smallest among the sources the
  // state came from (dense keys overlapping, or any when sparse rows come
  // from every source), and a worker some of them lack is left out.
  std::map<uint32_t, int64_t> contained;
  // The scale of the push-norm outlier bound of the round's own shard
  // (same layout, same shard; norms over other keys mean another scale);
  // 0: unknown.
  double norm_scale = 0;
  uint64_t bytes_read = 0;
};

// Round `round` of `sources` (store k holds old shard k) loaded into shard
// `shard` of `layout`: `dense` (its range that shard's; every value is
// overwritten, so it may be a store kept from before) and `sparse`
// (fresh and empty, or null when the model has none). Errors: NotFound
// when a store lacks the round; Corruption naming the chunk for a bad
// checksum; FailedPrecondition when the round was taken with another
// model (tensors, sparse width), optimizer or state layout.
StatusOr<RestoredShard> RestoreShard(
    const std::vector<const SnapshotStore*>& sources, uint64_t round,
    const KeyLayout& layout, uint32_t shard, const std::string& optimizer,
    DenseStore* dense, SparseTable* sparse);

// Shard `shard`'s own part of round `round` in `store` (a round written
// by that shard with `layout`, as a range's live copy is) loaded into
// `dense` and `sparse` (fresh and empty, or null). Errors: as RestoreShard;
// FailedPrecondition for another shard's part or layout.
StatusOr<RestoredShard> RestoreOwnPart(const SnapshotStore& store,
                                       uint64_t round, const KeyLayout& layout,
                                       uint32_t shard,
                                       const std::string& optimizer,
                                       DenseStore* dense, SparseTable* sparse);

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SNAPSHOT_SHARD_RESTORE_H_
