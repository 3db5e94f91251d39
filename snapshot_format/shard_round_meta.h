// What one shard's snapshot round says about itself: the meta record
// stored beside its arrays (schemas/snapshot.fbs: clock, layout, job,
// optimizer step, what the state contains, the arrays' sizes and chunks),
// and its encoding. The arrays themselves are chunks (chunk_codec.h).
// Thread-safety: pure functions over their arguments.
#ifndef LOCKSTEP_SNAPSHOT_FORMAT_SHARD_ROUND_META_H_
#define LOCKSTEP_SNAPSHOT_FORMAT_SHARD_ROUND_META_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/status.h"

namespace lockstep {

// Version of the stored meta; a round of another format is refused.
// Format 2 added incremental rounds (parent, partial arrays); a format 1
// round reads as a full one.
inline constexpr uint32_t kShardRoundFormat = 2;
inline constexpr uint32_t kOldestShardRoundFormat = 1;

// An incremental round's sparse arrays hold only the rows this array lists
// (uint64 row indices, ascending).
inline constexpr char kSparseChangedArray[] = "sparse_changed";
// A sparse table's ids; an incremental round holds the new rows' only (a
// row's id never changes), rows parent's sparse_rows to sparse_rows.
inline constexpr char kSparseIdsArray[] = "sparse_ids";

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
    uint64_t bytes = 0;   // the whole array's
    uint32_t chunks = 0;  // the whole array's
    // An incremental round's dense array stores only chunks `stored`
    // (ascending); the others are as in the parent round.
    bool partial = false;
    std::vector<uint32_t> stored;
  };
  std::vector<Array> arrays;  // by name, as stored
  // The round this one holds the changes since, in the same store; 0 for a
  // full round. Sparse arrays of an incremental round hold the rows listed
  // in kSparseChangedArray; sparse_rows is the table's size after it.
  uint64_t parent = 0;
  // Apply-on-arrival policies: per worker, the newest clock whose push the
  // state contains.
  std::map<uint32_t, int64_t> contained;
  double unix_time = 0;  // when the round was frozen
  // The scale of the shard's push-norm outlier bound (PushGuard::Scale);
  // 0: unknown (rounds from before it, a shard that never knew it).
  double norm_scale = 0;
};

std::string EncodeShardRoundMeta(const ShardRoundMeta& meta);
// Corruption when `bytes` is not a verifiable meta record, or of another
// format; InvalidArgument when its job or layout does not validate.
StatusOr<ShardRoundMeta> DecodeShardRoundMeta(std::string_view bytes);

}  // namespace lockstep

#endif  // LOCKSTEP_SNAPSHOT_FORMAT_SHARD_ROUND_META_H_
