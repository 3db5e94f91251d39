// Workload: what one benchmark operation touches on a server set, the
// gradient every push sends, and the exact floats a pull must return.
//
// Dense: the op covers the whole tensor "values" (keys [0, n)), split by the
// layout into one contiguous piece per shard. Sparse: the op covers n sorted
// hashed ids (SparseKeyOf(0..n-1)), one float each, split by id range.
//
// Expected values: before any push, dense keys hold InitialValue(seed, key,
// scale) and sparse rows hold 0. Every push sends the same gradient g, and
// the server applies a push on arrival as an SGD share n_w / X of its
// logical clock, so after P applied pushes each value is P times
// w -= (float)(lr * share) * g in float, whatever the order in which
// concurrent pushes were applied.
// Thread-safety: const methods are safe concurrently; ReplayPushes is not.
#ifndef LOCKSTEP_BENCH_PUSHPULL_WORKLOAD_H_
#define LOCKSTEP_BENCH_PUSHPULL_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/layout.h"
#include "common/status.h"

namespace lockstep::bench {

// The part of an operation served by one shard.
struct ShardSlice {
  uint32_t shard = 0;
  // Dense: the keys. Sparse: the index range into ids().
  KeySpan keys;
  // Where this slice's values start among the op's values.
  uint64_t value_offset = 0;
  uint64_t value_count() const { return keys.size(); }
};

class Workload {
 public:
  // `values` floats per op: dense keys [0, values) (the layout's tensor must
  // have exactly that many keys) or `values` sparse ids (sparse_dim 1).
  static StatusOr<std::unique_ptr<Workload>> Create(const KeyLayout& layout,
                                                    bool sparse,
                                                    uint64_t values,
                                                    uint64_t seed,
                                                    float init_scale);

  const KeyLayout& layout() const { return layout_; }
  bool sparse() const { return sparse_; }
  uint64_t values() const { return values_; }
  uint64_t value_bytes() const { return values_ * sizeof(float); }
  const std::vector<ShardSlice>& slices() const { return slices_; }
  // Sorted unique ids (sparse only). Shared so frames can point into it.
  const std::shared_ptr<std::vector<uint64_t>>& ids() const { return ids_; }
  // The gradient of every push; never modified after Create.
  const std::shared_ptr<std::vector<float>>& gradient() const {
    return gradient_;
  }
  // What a pull of the whole op must return now.
  std::span<const float> expected() const { return expected_; }

  // Advances expected() by `pushes` applied pushes of gradient() with
  // learning rate `lr` and gradient scale `share`, in the same float
  // arithmetic as the server's SGD.
  void ReplayPushes(uint64_t pushes, double lr, double share);

 private:
  Workload() = default;

  KeyLayout layout_;
  bool sparse_ = false;
  uint64_t values_ = 0;
  std::vector<ShardSlice> slices_;
  std::shared_ptr<std::vector<uint64_t>> ids_;
  std::shared_ptr<std::vector<float>> gradient_;
  std::vector<float> expected_;
};

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_WORKLOAD_H_
