#include "server/optimizers/adam_optimizer.h"

#include <cmath>

#include "server/optimizers/chunked.h"

namespace lockstep {
namespace {

using optimizers::ForEachChunk;
using optimizers::kBlock;
using optimizers::SqrtBlock;

struct AdamCoeffs {
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float step_size;     // lr / (1 - beta1^step)
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^step)
  float epsilon, weight_decay;
};

inline void AdamChunk(float* __restrict w, const float* __restrict g,
                      float* __restrict m, float* __restrict v, size_t count,
                      const AdamCoeffs& c) {
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    const float grad = g[j] + c.weight_decay * w[j];
    m[j] = c.beta1 * m[j] + c.one_minus_beta1 * grad;
    root[j] = v[j] = c.beta2 * v[j] + c.one_minus_beta2 * grad * grad;
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    w[j] -= c.step_size * m[j] / (root[j] * c.inv_sqrt_bc2 + c.epsilon);
  }
}

// mhat / (sqrt(vhat) + eps) == (m / bc1) / (sqrt(v) / sqrt(bc2) + eps),
// with the bias corrections bc = 1 - beta^step computed once in double.
AdamCoeffs Coeffs(const OptimizerConfig& config, double lr, int64_t step) {
  const double t = static_cast<double>(step);
  const double bc1 = 1.0 - std::pow(config.beta1, t);
  const double bc2 = 1.0 - std::pow(config.beta2, t);
  return AdamCoeffs{
      .beta1 = static_cast<float>(config.beta1),
      .one_minus_beta1 = static_cast<float>(1.0 - config.beta1),
      .beta2 = static_cast<float>(config.beta2),
      .one_minus_beta2 = static_cast<float>(1.0 - config.beta2),
      .step_size = static_cast<float>(lr / bc1),
      .inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2)),
      .epsilon = static_cast<float>(config.epsilon),
      .weight_decay = static_cast<float>(config.weight_decay),
  };
}

}  // namespace

void AdamOptimizer::Apply(float* weights, const float* grad,
                          float* const* slots, size_t n, double lr,
                          int64_t step) const {
  const AdamCoeffs c = Coeffs(config_, lr, step);
  float* m = slots[0];
  float* v = slots[1];
  ForEachChunk(n, [&](size_t i, size_t count) {
    AdamChunk(weights + i, grad + i, m + i, v + i, count, c);
  });
}

StatusOr<std::unique_ptr<Optimizer>> AdamOptimizer::Create(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new AdamOptimizer(config));
}

}  // namespace lockstep
