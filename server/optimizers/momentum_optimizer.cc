#include "server/optimizers/momentum_optimizer.h"

#include <cmath>

#include "server/optimizers/chunked.h"

namespace lockstep {
namespace {

using optimizers::ForEachChunk;

// A fraction s of a step: the velocity decays by mu^s and takes
// gain = (1 - mu^s) / (1 - mu) of the gradient (1 for a whole step), so its
// steady state under a constant gradient is g' / (1 - mu) at any s.
inline void MomentumChunk(float* __restrict w, const float* __restrict g,
                          float* __restrict v, size_t count, float lr, float mu,
                          float gain, float wd) {
  for (size_t j = 0; j < count; ++j) {
    const float velocity = mu * v[j] + gain * (g[j] + wd * w[j]);
    v[j] = velocity;
    w[j] -= lr * velocity;
  }
}

}  // namespace

void MomentumOptimizer::Apply(float* weights, const float* grad,
                              float* const* slots, size_t n,
                              const UpdateStep& step) const {
  const auto lr_f = static_cast<float>(step.lr * step.fraction);
  const double mu_s = std::pow(momentum_, step.fraction);
  const auto mu_f = static_cast<float>(mu_s);
  const auto gain = static_cast<float>((1.0 - mu_s) / (1.0 - momentum_));
  float* velocity = slots[0];
  ForEachChunk(n, [&](size_t i, size_t count) {
    MomentumChunk(weights + i, grad + i, velocity + i, count, lr_f, mu_f, gain,
                  weight_decay_);
  });
}

StatusOr<std::unique_ptr<Optimizer>> MomentumOptimizer::Create(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new MomentumOptimizer(config));
}

}  // namespace lockstep
