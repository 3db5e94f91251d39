#include "optimizers/sgd_optimizer.h"

#include <cmath>

#include "optimizers/chunked.h"

namespace lockstep {
namespace {

using optimizers::ForEachChunk;

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

}  // namespace

void SgdOptimizer::ApplyWhole(float* weights, const float* grad,
                              float* const* /*slots*/, size_t n,
                              const UpdateStep& step) const {
  const auto lr_f = static_cast<float>(step.lr);
  ForEachChunk(n, [&](size_t i, size_t count) {
    SgdWholeChunk(weights + i, grad + i, count, lr_f, weight_decay_);
  });
}

// SGD is linear in the gradient and has no state: a clock's shares sum to
// its whole step as they come, and nothing is left for the clock's end.
void SgdOptimizer::ApplyShare(float* weights, const float* grad,
                              float* const* /*slots*/, size_t n,
                              const UpdateStep& step) const {
  const auto lr_f = static_cast<float>(step.lr * step.fraction);
  const auto gs = static_cast<float>(step.grad_scale);
  ForEachChunk(n, [&](size_t i, size_t count) {
    SgdShareChunk(weights + i, grad + i, count, lr_f, gs, weight_decay_);
  });
}

void SgdOptimizer::ApplyClose(float* /*weights*/, float* const* /*slots*/,
                              size_t /*n*/, const UpdateStep& /*step*/) const {}

StatusOr<std::unique_ptr<Optimizer>> SgdOptimizer::Create(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new SgdOptimizer(config));
}

}  // namespace lockstep
