// The key layout: how the model's tensors map to keys and keys to shards.
// Dense tensors are flattened into one key space (one float per key) and
// split into S contiguous ranges balanced by bytes. Sparse ids (hashed
// feature ids, see SparseKeyOf) are range-partitioned over the 64-bit space.
// Thread-safety: immutable after Build/FromParts; safe for concurrent reads.
#ifndef LOCKSTEP_COMMON_LAYOUT_H_
#define LOCKSTEP_COMMON_LAYOUT_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

struct KeySpan {
  uint64_t begin = 0;
  uint64_t end = 0;  // exclusive
  uint64_t size() const { return end - begin; }
  bool operator==(const KeySpan&) const = default;
};

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> shape;
  uint64_t offset = 0;  // first key
  uint64_t size = 0;    // number of keys (product of shape)
  float init_scale = 0;
};

struct ShardInfo {
  uint32_t shard = 0;
  KeySpan dense;
  // Sparse ids owned: [sparse_begin, sparse_end); sparse_end == 0 means 2^64.
  uint64_t sparse_begin = 0;
  uint64_t sparse_end = 0;
  std::string endpoint;
  bool OwnsSparse(uint64_t id) const {
    return id >= sparse_begin && (sparse_end == 0 || id < sparse_end);
  }
};

// A piece of a request that one shard serves.
struct ShardPiece {
  uint32_t shard = 0;
  KeySpan keys;  // dense keys, or [first, last) indices into a sorted id list
};

class KeyLayout {
 public:
  KeyLayout() = default;

  // Assigns offsets to `tensors` (in order) and splits the dense keys into
  // `shards` contiguous ranges whose sizes differ by at most one alignment
  // unit. REQUIRES: shards >= 1. Endpoints start empty.
  static StatusOr<KeyLayout> Build(std::vector<TensorInfo> tensors,
                                   uint32_t shards, uint32_t sparse_dim);
  // A layout from its parts as a peer sent them (common/wire/
  // layout_codec.h): each tensor's size is the product of its shape;
  // InvalidArgument unless the tensors lie back to back over dense_keys and
  // the shards, numbered in order, cover them contiguously.
  static StatusOr<KeyLayout> FromParts(std::vector<TensorInfo> tensors,
                                       uint64_t dense_keys, uint32_t sparse_dim,
                                       std::vector<ShardInfo> shards);

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::vector<ShardInfo>& shards() const { return shards_; }
  uint32_t num_shards() const { return static_cast<uint32_t>(shards_.size()); }
  uint64_t dense_keys() const { return dense_keys_; }
  uint32_t sparse_dim() const { return sparse_dim_; }
  void set_endpoint(uint32_t shard, std::string endpoint) {
    shards_[shard].endpoint = std::move(endpoint);
  }
  // The tensor named `name`, or nullptr.
  const TensorInfo* FindTensor(const std::string& name) const;

  // Shard owning dense key `key`. REQUIRES: key < dense_keys().
  uint32_t ShardOfDenseKey(uint64_t key) const;
  uint32_t ShardOfSparseId(uint64_t id) const;
  // Splits a dense range into per-shard pieces, in key order.
  std::vector<ShardPiece> SplitDense(KeySpan keys) const;
  // Splits a sorted id list into per-shard index ranges, in order.
  std::vector<ShardPiece> SplitSortedIds(std::span<const uint64_t> ids) const;

 private:
  std::vector<TensorInfo> tensors_;
  std::vector<ShardInfo> shards_;
  uint64_t dense_keys_ = 0;
  uint32_t sparse_dim_ = 0;
};

// Maps a raw feature index to a well-spread 64-bit sparse id (a bijection,
// so distinct features never collide).
uint64_t SparseKeyOf(uint64_t feature);

// The deterministic initial value of dense key `key`: uniform in
// [-scale, scale] from a counter-based hash of (seed, key), so it does not
// depend on how keys are sharded. scale 0 gives 0.
float InitialValue(uint64_t seed, uint64_t key, float scale);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_LAYOUT_H_
