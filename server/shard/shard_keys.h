// The keys one server shard owns: its contiguous dense range and its slice
// of the sparse id space (layout.h), and the checks every pull and push
// passes before it touches the model: dense ranges inside the shard's,
// sparse ids owned by it, sorted and unique.
// Thread-safety: immutable after construction; const methods are safe.
#ifndef LOCKSTEP_SERVER_SHARD_SHARD_KEYS_H_
#define LOCKSTEP_SERVER_SHARD_SHARD_KEYS_H_

#include <cstdint>
#include <span>
#include <vector>
#include <zmq.hpp>

#include "common/layout.h"
#include "common/status.h"
#include "common/wire/message.h"

namespace lockstep {

class ShardKeys {
 public:
  ShardKeys() = default;
  // Shard `shard` of `layout`. REQUIRES: shard < layout.num_shards().
  ShardKeys(const KeyLayout& layout, uint32_t shard)
      : info_(layout.shards()[shard]), sparse_(layout.sparse_dim() > 0) {}

  KeySpan dense() const { return info_.dense; }

  // Copies `ranges` (may be null: none) into *out and sums their sizes
  // into *dense_values. InvalidArgument naming the range and the shard's
  // when one is empty or not inside the shard's dense range.
  Status CheckRanges(const flatbuffers::Vector<const wire::KeyRange*>* ranges,
                     std::vector<KeySpan>* out, uint64_t* dense_values) const;
  // The `count` sparse ids of `frame` (copied into *scratch only when
  // misaligned). InvalidArgument when the model has no sparse keys, the
  // frame's size is wrong, an id is another shard's, or the ids are not
  // sorted and unique.
  StatusOr<std::span<const uint64_t>> CheckSparseIds(
      const zmq::message_t& frame, uint64_t count,
      std::vector<uint64_t>* scratch) const;

 private:
  ShardInfo info_;
  bool sparse_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_SHARD_KEYS_H_
