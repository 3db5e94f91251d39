// The one loop every optimizer runs: an update rule (Rule) applied chunk by
// chunk over a range (ForEachChunk, chunked.h), for each kind of
// UpdateStep. A rule names itself and its state and, per call, gives the
// chunk kernel of that step with its coefficients computed once:
//
//   struct Rule {
//     static constexpr std::string_view kName;  // the registered name
//     static constexpr int kSlots;              // Optimizer::state_slots
//     static constexpr bool kCloses;  // has a clock's close (kClose) step
//     explicit Rule(const OptimizerConfig& config);
//     // Each returns a kernel k(w, g, slots, i, count) (Close's without g)
//     // updating floats [i, i + count) of the range.
//     auto Whole(const UpdateStep& step) const;
//     auto Share(const UpdateStep& step) const;
//     auto Close(const UpdateStep& step) const;
//   };
//
// ForEachChunk is flattened, so each kernel is inlined into a loop with a
// constant trip count and vectorized.
// Thread-safety: immutable after construction; Apply may run concurrently
// on disjoint parameter ranges.
#ifndef LOCKSTEP_OPTIMIZERS_CHUNKED_OPTIMIZER_H_
#define LOCKSTEP_OPTIMIZERS_CHUNKED_OPTIMIZER_H_

#include <cstddef>
#include <string_view>

#include "optimizers/chunked.h"
#include "optimizers/optimizer.h"

namespace lockstep {

template <typename Rule>
class ChunkedOptimizer final : public Optimizer {
 public:
  explicit ChunkedOptimizer(const OptimizerConfig& config) : rule_(config) {}

  std::string_view name() const override { return Rule::kName; }
  int state_slots() const override { return Rule::kSlots; }

 private:
  void ApplyWhole(float* weights, const float* grad, float* const* slots,
                  size_t n, const UpdateStep& step) const override {
    const auto kernel = rule_.Whole(step);
    optimizers::ForEachChunk(n, [&](size_t i, size_t count) {
      kernel(weights, grad, slots, i, count);
    });
  }
  void ApplyShare(float* weights, const float* grad, float* const* slots,
                  size_t n, const UpdateStep& step) const override {
    const auto kernel = rule_.Share(step);
    optimizers::ForEachChunk(n, [&](size_t i, size_t count) {
      kernel(weights, grad, slots, i, count);
    });
  }
  void ApplyClose(float* weights, float* const* slots, size_t n,
                  const UpdateStep& step) const override {
    if constexpr (Rule::kCloses) {
      const auto kernel = rule_.Close(step);
      optimizers::ForEachChunk(
          n, [&](size_t i, size_t count) { kernel(weights, slots, i, count); });
    }
  }

  Rule rule_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_OPTIMIZERS_CHUNKED_OPTIMIZER_H_
