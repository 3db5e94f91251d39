#include "bench/pushpull/workload.h"

#include <algorithm>

#include "common/layout.h"

namespace lockstep::bench {
namespace {

// Multiples of 2^-12 in [-3, 3] * 2^-12: small next to the initial weights
// (|w| <= 0.5), so thousands of pushes keep every value finite and normal.
constexpr float kGradientUnit = 1.0f / 4096.0f;

std::shared_ptr<std::vector<float>> MakeGradient(uint64_t n) {
  auto g = std::make_shared<std::vector<float>>(n);
  for (uint64_t i = 0; i < n; ++i) {
    (*g)[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * kGradientUnit;
  }
  return g;
}

}  // namespace

StatusOr<std::unique_ptr<Workload>> Workload::Create(const KeyLayout& layout,
                                                     bool sparse,
                                                     uint64_t values,
                                                     uint64_t seed,
                                                     float init_scale) {
  if (values == 0) return InvalidArgument("a workload needs values");
  std::unique_ptr<Workload> w(new Workload());
  w->layout_ = layout;
  w->sparse_ = sparse;
  w->values_ = values;
  w->gradient_ = MakeGradient(values);
  std::vector<ShardPiece> pieces;
  if (sparse) {
    if (layout.sparse_dim() != 1) {
      return InvalidArgument("sparse workload needs sparse_dim 1");
    }
    w->ids_ = std::make_shared<std::vector<uint64_t>>(values);
    for (uint64_t i = 0; i < values; ++i) (*w->ids_)[i] = SparseKeyOf(i);
    std::sort(w->ids_->begin(), w->ids_->end());
    pieces = layout.SplitSortedIds(*w->ids_);
    w->expected_.assign(values, 0.0f);
  } else {
    if (layout.dense_keys() != values) {
      return InvalidArgument(
          "layout has " + std::to_string(layout.dense_keys()) +
          " dense keys, workload wants " + std::to_string(values));
    }
    pieces = layout.SplitDense({0, values});
    w->expected_.resize(values);
    for (uint64_t k = 0; k < values; ++k) {
      w->expected_[k] = InitialValue(seed, k, init_scale);
    }
  }
  for (const ShardPiece& p : pieces) {
    if (p.keys.size() == 0) continue;
    // Dense keys start at 0 and sparse index ranges index the op's ids, so
    // both are offsets into the op's values.
    w->slices_.push_back({p.shard, p.keys, p.keys.begin});
  }
  return w;
}

void Workload::ReplayPushes(uint64_t pushes, double lr, double share) {
  // The server's path for one push of batch 1 (SgdOptimizer, a share of a
  // logical clock): the weighted mean is g itself (exact in double), and
  // w -= float(lr * share) * (1 * g + 0 * w); SGD has nothing to close.
  const auto lr_f = static_cast<float>(lr * share);
  const float gs = 1.0f;
  const float wd = 0.0f;
  const std::vector<float>& g = *gradient_;
  float* w = expected_.data();
  const uint64_t n = expected_.size();
  for (uint64_t p = 0; p < pushes; ++p) {
    for (uint64_t i = 0; i < n; ++i) w[i] -= lr_f * (gs * g[i] + wd * w[i]);
  }
}

}  // namespace lockstep::bench
