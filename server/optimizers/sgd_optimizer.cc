#include "server/optimizers/sgd_optimizer.h"

#include <cmath>

#include "server/optimizers/chunked.h"

namespace lockstep {
namespace {

using optimizers::ForEachChunk;

inline void SgdChunk(float* __restrict w, const float* __restrict g,
                     size_t count, float lr, float wd) {
  for (size_t j = 0; j < count; ++j) w[j] -= lr * (g[j] + wd * w[j]);
}

}  // namespace

void SgdOptimizer::Apply(float* weights, const float* grad,
                         float* const* /*slots*/, size_t n,
                         const UpdateStep& step) const {
  const auto lr_f = static_cast<float>(step.lr * step.fraction);
  ForEachChunk(n, [&](size_t i, size_t count) {
    SgdChunk(weights + i, grad + i, count, lr_f, weight_decay_);
  });
}

StatusOr<std::unique_ptr<Optimizer>> SgdOptimizer::Create(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new SgdOptimizer(config));
}

}  // namespace lockstep
