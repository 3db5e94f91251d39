#include "server/optimizers/adagrad_optimizer.h"

#include <cmath>

#include "server/optimizers/chunked.h"

namespace lockstep {
namespace {

using optimizers::ForEachChunk;
using optimizers::kBlock;
using optimizers::SqrtBlock;

// AdaGrad: G += g'^2; w -= lr * g' / (sqrt(G) + eps).
inline void AdagradChunk(float* __restrict w, const float* __restrict g,
                         float* __restrict acc, size_t count, float lr,
                         float eps, float wd) {
  float grad[kBlock] = {};
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    grad[j] = g[j] + wd * w[j];
    root[j] = acc[j] = acc[j] + grad[j] * grad[j];
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    w[j] -= lr * grad[j] / (root[j] + eps);
  }
}

}  // namespace

void AdagradOptimizer::Apply(float* weights, const float* grad,
                             float* const* slots, size_t n, double lr,
                             int64_t /*step*/) const {
  const float lr_f = static_cast<float>(lr);
  float* acc = slots[0];
  ForEachChunk(n, [&](size_t i, size_t count) {
    AdagradChunk(weights + i, grad + i, acc + i, count, lr_f, epsilon_,
                 weight_decay_);
  });
}

StatusOr<std::unique_ptr<Optimizer>> AdagradOptimizer::Create(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new AdagradOptimizer(config));
}

}  // namespace lockstep
