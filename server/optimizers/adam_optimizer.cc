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
  float step_size;     // lr s / (1 - beta1^time)
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^time)
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
// with the bias corrections bc = 1 - beta^time computed once in double. A
// fraction s of a step decays the moments by beta^s: after any updates
// summing to `time`, a constant gradient's moments are (1 - beta^time) g
// and (1 - beta^time) g^2, which the corrections undo exactly.
AdamCoeffs Coeffs(const OptimizerConfig& config, const UpdateStep& step) {
  const double t = step.time;
  const double bc1 = 1.0 - std::pow(config.beta1, t);
  const double bc2 = 1.0 - std::pow(config.beta2, t);
  const double beta1_s = std::pow(config.beta1, step.fraction);
  const double beta2_s = std::pow(config.beta2, step.fraction);
  return AdamCoeffs{
      .beta1 = static_cast<float>(beta1_s),
      .one_minus_beta1 = static_cast<float>(1.0 - beta1_s),
      .beta2 = static_cast<float>(beta2_s),
      .one_minus_beta2 = static_cast<float>(1.0 - beta2_s),
      .step_size = static_cast<float>(step.lr * step.fraction / bc1),
      .inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2)),
      .epsilon = static_cast<float>(config.epsilon),
      .weight_decay = static_cast<float>(config.weight_decay),
  };
}

}  // namespace

void AdamOptimizer::Apply(float* weights, const float* grad,
                          float* const* slots, size_t n,
                          const UpdateStep& step) const {
  const AdamCoeffs c = Coeffs(config_, step);
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
