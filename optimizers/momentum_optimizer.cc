#include "optimizers/momentum_optimizer.h"

#include <cmath>

#include "optimizers/chunked.h"

namespace lockstep {
namespace {

using optimizers::ForEachChunk;

inline void MomentumWholeChunk(float* __restrict w, const float* __restrict g,
                               float* __restrict v, size_t count, float lr,
                               float mu, float wd) {
  for (size_t j = 0; j < count; ++j) {
    const float velocity = mu * v[j] + (g[j] + wd * w[j]);
    v[j] = velocity;
    w[j] -= lr * velocity;
  }
}

struct MomentumShareCoeffs {
  float lr_s, s, gs, mu, wd;
};

// d = mu v + g' against the clock's velocity v, which stays as it is until
// the clock closes; C and P gather the clock's gradient and directions.
inline void MomentumShareChunk(float* __restrict w, const float* __restrict g,
                               const float* __restrict v, float* __restrict c,
                               float* __restrict p, size_t count,
                               const MomentumShareCoeffs& k) {
  for (size_t j = 0; j < count; ++j) {
    const float grad = k.gs * g[j] + k.wd * w[j];
    const float d = k.mu * v[j] + grad;
    w[j] -= k.lr_s * d;
    c[j] += k.s * grad;
    p[j] += k.s * d;
  }
}

// The clock's whole step D = mu v + C replaces the shares' P.
inline void MomentumCloseChunk(float* __restrict w, float* __restrict v,
                               float* __restrict c, float* __restrict p,
                               size_t count, float lr, float mu) {
  for (size_t j = 0; j < count; ++j) {
    const float velocity = mu * v[j] + c[j];
    w[j] += lr * (p[j] - velocity);
    v[j] = velocity;
    c[j] = 0.0f;
    p[j] = 0.0f;
  }
}

}  // namespace

void MomentumOptimizer::ApplyWhole(float* weights, const float* grad,
                                   float* const* slots, size_t n,
                                   const UpdateStep& step) const {
  const auto lr_f = static_cast<float>(step.lr);
  float* velocity = slots[0];
  ForEachChunk(n, [&](size_t i, size_t count) {
    MomentumWholeChunk(weights + i, grad + i, velocity + i, count, lr_f,
                       momentum_, weight_decay_);
  });
}

void MomentumOptimizer::ApplyShare(float* weights, const float* grad,
                                   float* const* slots, size_t n,
                                   const UpdateStep& step) const {
  const MomentumShareCoeffs k{static_cast<float>(step.lr * step.fraction),
                              static_cast<float>(step.fraction),
                              static_cast<float>(step.grad_scale), momentum_,
                              weight_decay_};
  ForEachChunk(n, [&](size_t i, size_t count) {
    MomentumShareChunk(weights + i, grad + i, slots[0] + i, slots[1] + i,
                       slots[2] + i, count, k);
  });
}

void MomentumOptimizer::ApplyClose(float* weights, float* const* slots,
                                   size_t n, const UpdateStep& step) const {
  const auto lr_f = static_cast<float>(step.lr);
  ForEachChunk(n, [&](size_t i, size_t count) {
    MomentumCloseChunk(weights + i, slots[0] + i, slots[1] + i, slots[2] + i,
                       count, lr_f, momentum_);
  });
}

StatusOr<std::unique_ptr<Optimizer>> MomentumOptimizer::Create(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new MomentumOptimizer(config));
}

}  // namespace lockstep
