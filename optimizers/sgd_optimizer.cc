// The "sgd" optimizer: plain SGD: w -= lr * (g + wd * w).

#include <cmath>

#include "optimizers/chunked.h"
#include "optimizers/chunked_optimizer.h"
#include "optimizers/optimizer_kinds.h"

namespace lockstep {
namespace {

// w -= lr * (gs * g + wd * w): a whole step with gs = 1, a share with lr
// already multiplied by the share.
inline void SgdShareChunk(float* __restrict w, const float* __restrict g,
                          size_t count, float lr, float gs, float wd) {
  for (size_t j = 0; j < count; ++j) w[j] -= lr * (gs * g[j] + wd * w[j]);
}

inline void SgdWholeChunk(float* __restrict w, const float* __restrict g,
                          size_t count, float lr, float wd) {
  for (size_t j = 0; j < count; ++j) w[j] -= lr * (g[j] + wd * w[j]);
}

// SGD is linear in the gradient and has no state: a clock's shares sum to
// its whole step as they come, and nothing is left for the clock's end.
class SgdRule {
 public:
  static constexpr std::string_view kName = "sgd";
  static constexpr int kSlots = 0;
  static constexpr bool kCloses = false;
  explicit SgdRule(const OptimizerConfig& config)
      : weight_decay_(static_cast<float>(config.weight_decay)) {}

  auto Whole(const UpdateStep& step) const {
    const auto lr = static_cast<float>(step.lr);
    const float wd = weight_decay_;
    return
        [lr, wd](float* w, const float* g, float* const* /*slots*/, size_t i,
                 size_t count) { SgdWholeChunk(w + i, g + i, count, lr, wd); };
  }
  auto Share(const UpdateStep& step) const {
    const auto lr = static_cast<float>(step.lr * step.fraction);
    const auto gs = static_cast<float>(step.grad_scale);
    const float wd = weight_decay_;
    return [lr, gs, wd](float* w, const float* g, float* const* /*slots*/,
                        size_t i, size_t count) {
      SgdShareChunk(w + i, g + i, count, lr, gs, wd);
    };
  }

 private:
  float weight_decay_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> CreateSgdOptimizer(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new ChunkedOptimizer<SgdRule>(config));
}

}  // namespace lockstep
