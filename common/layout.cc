#include "common/layout.h"

#include <algorithm>
#include <span>

namespace lockstep {
namespace {

// Shard boundaries fall on multiples of 16 keys (64 bytes) so no cache line
// is shared between shards' update loops.
constexpr uint64_t kAlignKeys = 16;

uint64_t SparseBoundary(uint32_t s, uint32_t shards) {
  if (s == shards) return 0;  // 2^64
  const unsigned __int128 span = static_cast<unsigned __int128>(1) << 64;
  return static_cast<uint64_t>(span * s / shards);
}

}  // namespace

StatusOr<KeyLayout> KeyLayout::Build(std::vector<TensorInfo> tensors,
                                     uint32_t shards, uint32_t sparse_dim) {
  if (shards == 0) return InvalidArgument("layout needs at least one shard");
  KeyLayout layout;
  uint64_t offset = 0;
  for (auto& t : tensors) {
    uint64_t size = t.shape.empty() ? 0 : 1;
    for (uint64_t d : t.shape) size *= d;
    if (size == 0) return InvalidArgument("tensor " + t.name + " is empty");
    t.offset = offset;
    t.size = size;
    offset += size;
  }
  layout.tensors_ = std::move(tensors);
  layout.dense_keys_ = offset;
  layout.sparse_dim_ = sparse_dim;
  const uint64_t units = (offset + kAlignKeys - 1) / kAlignKeys;
  for (uint32_t s = 0; s < shards; ++s) {
    ShardInfo info;
    info.shard = s;
    info.dense.begin = std::min(offset, units * s / shards * kAlignKeys);
    info.dense.end = std::min(offset, units * (s + 1) / shards * kAlignKeys);
    info.sparse_begin = SparseBoundary(s, shards);
    info.sparse_end = SparseBoundary(s + 1, shards);
    layout.shards_.push_back(info);
  }
  return layout;
}

StatusOr<KeyLayout> KeyLayout::FromParts(std::vector<TensorInfo> tensors,
                                         uint64_t dense_keys,
                                         uint32_t sparse_dim,
                                         std::vector<ShardInfo> shards) {
  KeyLayout layout;
  uint64_t expect_offset = 0;
  for (TensorInfo& info : tensors) {
    if (info.shape.empty()) {
      return InvalidArgument("tensor " + info.name + " has no shape");
    }
    uint64_t size = 1;
    for (uint64_t d : info.shape) size *= d;
    info.size = size;
    if (info.offset != expect_offset) {
      return InvalidArgument("tensor " + info.name + " has a bad offset");
    }
    expect_offset += size;
    layout.tensors_.push_back(std::move(info));
  }
  layout.dense_keys_ = dense_keys;
  if (expect_offset != layout.dense_keys_) {
    return InvalidArgument("tensor sizes do not add up to dense_keys");
  }
  layout.sparse_dim_ = sparse_dim;
  uint64_t next = 0;
  for (ShardInfo& info : shards) {
    if (info.shard != layout.shards_.size() || info.dense.begin != next ||
        info.dense.end < info.dense.begin) {
      return InvalidArgument("shard ranges are not contiguous");
    }
    next = info.dense.end;
    layout.shards_.push_back(std::move(info));
  }
  if (layout.shards_.empty() || next != layout.dense_keys_) {
    return InvalidArgument("shard ranges do not cover the dense keys");
  }
  return layout;
}

const TensorInfo* KeyLayout::FindTensor(const std::string& name) const {
  for (const auto& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

uint32_t KeyLayout::ShardOfDenseKey(uint64_t key) const {
  auto it = std::upper_bound(
      shards_.begin(), shards_.end(), key,
      [](uint64_t k, const ShardInfo& s) { return k < s.dense.end; });
  if (it == shards_.end()) return num_shards() - 1;
  return it->shard;
}

uint32_t KeyLayout::ShardOfSparseId(uint64_t id) const {
  const unsigned __int128 scaled =
      static_cast<unsigned __int128>(id) * shards_.size();
  auto s = static_cast<uint32_t>(scaled >> 64);
  // Guard the rounding at the boundaries.
  while (s > 0 && id < shards_[s].sparse_begin) --s;
  while (s + 1 < shards_.size() && !shards_[s].OwnsSparse(id)) ++s;
  return s;
}

std::vector<ShardPiece> KeyLayout::SplitDense(KeySpan keys) const {
  std::vector<ShardPiece> pieces;
  if (keys.begin >= keys.end) return pieces;
  for (uint32_t s = ShardOfDenseKey(keys.begin); s < shards_.size(); ++s) {
    const KeySpan& own = shards_[s].dense;
    if (own.begin >= keys.end) break;
    KeySpan part{std::max(own.begin, keys.begin), std::min(own.end, keys.end)};
    if (part.begin < part.end) pieces.push_back({s, part});
  }
  return pieces;
}

std::vector<ShardPiece> KeyLayout::SplitSortedIds(
    std::span<const uint64_t> ids) const {
  std::vector<ShardPiece> pieces;
  size_t i = 0;
  while (i < ids.size()) {
    const uint32_t s = ShardOfSparseId(ids[i]);
    const ShardInfo& own = shards_[s];
    const std::span<const uint64_t> rest = ids.subspan(i);
    const size_t j =
        own.sparse_end == 0
            ? ids.size()
            : i + static_cast<size_t>(std::lower_bound(rest.begin(), rest.end(),
                                                       own.sparse_end) -
                                      rest.begin());
    pieces.push_back({s, {i, j}});
    i = j;
  }
  return pieces;
}

uint64_t SparseKeyOf(uint64_t feature) {
  // splitmix64's finalizer: a bijection on 64-bit integers.
  uint64_t z = feature + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float InitialValue(uint64_t seed, uint64_t key, float scale) {
  if (scale == 0.0f) return 0.0f;
  uint64_t z = SparseKeyOf(seed * 0x9e3779b97f4a7c15ULL ^ key);
  // 24 random bits -> uniform in [0, 1).
  const double unit = static_cast<double>(z >> 40) / 16777216.0;
  return static_cast<float>((2.0 * unit - 1.0) * scale);
}

}  // namespace lockstep
