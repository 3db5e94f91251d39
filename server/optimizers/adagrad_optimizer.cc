#include "server/optimizers/adagrad_optimizer.h"

#include <cmath>

#include "server/optimizers/chunked.h"

namespace lockstep {
namespace {

using optimizers::ForEachChunk;
using optimizers::kBlock;
using optimizers::SqrtBlock;

// AdaGrad, a fraction s of a step: G += s g'^2; w -= lr s g' / (sqrt(G) +
// eps) (`lr` here is lr * s).
inline void AdagradChunk(float* __restrict w, const float* __restrict g,
                         float* __restrict acc, size_t count, float lr, float s,
                         float eps, float wd) {
  float grad[kBlock] = {};
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    grad[j] = g[j] + wd * w[j];
    root[j] = acc[j] = acc[j] + s * (grad[j] * grad[j]);
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    w[j] -= lr * grad[j] / (root[j] + eps);
  }
}

}  // namespace

void AdagradOptimizer::Apply(float* weights, const float* grad,
                             float* const* slots, size_t n,
                             const UpdateStep& step) const {
  const auto lr_f = static_cast<float>(step.lr * step.fraction);
  const auto s = static_cast<float>(step.fraction);
  float* acc = slots[0];
  ForEachChunk(n, [&](size_t i, size_t count) {
    AdagradChunk(weights + i, grad + i, acc + i, count, lr_f, s, epsilon_,
                 weight_decay_);
  });
}

StatusOr<std::unique_ptr<Optimizer>> AdagradOptimizer::Create(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new AdagradOptimizer(config));
}

}  // namespace lockstep
