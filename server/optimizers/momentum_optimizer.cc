#include "server/optimizers/momentum_optimizer.h"

#include <cmath>

#include "server/optimizers/chunked.h"

namespace lockstep {
namespace {

using optimizers::ForEachChunk;

inline void MomentumChunk(float* __restrict w, const float* __restrict g,
                          float* __restrict v, size_t count, float lr, float mu,
                          float wd) {
  for (size_t j = 0; j < count; ++j) {
    const float velocity = mu * v[j] + (g[j] + wd * w[j]);
    v[j] = velocity;
    w[j] -= lr * velocity;
  }
}

}  // namespace

void MomentumOptimizer::Apply(float* weights, const float* grad,
                              float* const* slots, size_t n, double lr,
                              int64_t /*step*/) const {
  const float lr_f = static_cast<float>(lr);
  float* velocity = slots[0];
  ForEachChunk(n, [&](size_t i, size_t count) {
    MomentumChunk(weights + i, grad + i, velocity + i, count, lr_f, momentum_,
                  weight_decay_);
  });
}

StatusOr<std::unique_ptr<Optimizer>> MomentumOptimizer::Create(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new MomentumOptimizer(config));
}

}  // namespace lockstep
