// The "adam" optimizer: Adam (Kingma & Ba) with bias correction and
// coupled weight decay (as PyTorch's Adam; not AdamW).

#include <cmath>

#include "optimizers/chunked.h"
#include "optimizers/chunked_optimizer.h"
#include "optimizers/optimizer_kinds.h"

namespace lockstep {
namespace {

using optimizers::kBlock;
using optimizers::SqrtBlock;

struct AdamCoeffs {
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float inv_bc1;       // 1 / (1 - beta1^number)
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^number)
  float epsilon, weight_decay;
  float step_size;  // lr s / bc1 (s = 1 for whole steps and closes)
  float s_inv_bc1;  // a share's s / bc1: its direction's part of P
  float lr;         // the close's rate
  float s, gs;      // a share's fraction and gradient weight
};

inline void AdamWholeChunk(float* __restrict w, const float* __restrict g,
                           float* __restrict m, float* __restrict v,
                           size_t count, const AdamCoeffs& c) {
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

// The direction of g' alone from the clock's moments, which stay as they
// are until the clock closes.
inline void AdamShareChunk(float* __restrict w, const float* __restrict g,
                           const float* __restrict m, const float* __restrict v,
                           float* __restrict acc, float* __restrict moved,
                           size_t count, const AdamCoeffs& c) {
  float grad[kBlock] = {};
  float first[kBlock] = {};
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    grad[j] = c.gs * g[j] + c.weight_decay * w[j];
    first[j] = c.beta1 * m[j] + c.one_minus_beta1 * grad[j];
    root[j] = c.beta2 * v[j] + c.one_minus_beta2 * grad[j] * grad[j];
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    // Written as WholeChunk writes it, so that one share of a whole clock
    // is bit for bit a whole step.
    const float den = root[j] * c.inv_sqrt_bc2 + c.epsilon;
    w[j] -= c.step_size * first[j] / den;
    acc[j] += c.s * grad[j];
    moved[j] += c.s_inv_bc1 * first[j] / den;
  }
}

// The moments take the clock's gradient C, and its direction D replaces
// the shares' provisional P.
inline void AdamCloseChunk(float* __restrict w, float* __restrict m,
                           float* __restrict v, float* __restrict acc,
                           float* __restrict moved, size_t count,
                           const AdamCoeffs& c) {
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    m[j] = c.beta1 * m[j] + c.one_minus_beta1 * acc[j];
    root[j] = v[j] = c.beta2 * v[j] + c.one_minus_beta2 * acc[j] * acc[j];
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    const float d = c.inv_bc1 * m[j] / (root[j] * c.inv_sqrt_bc2 + c.epsilon);
    w[j] += c.lr * (moved[j] - d);
    acc[j] = 0.0f;
    moved[j] = 0.0f;
  }
}

// mhat / (sqrt(vhat) + eps) == (m / bc1) / (sqrt(v) / sqrt(bc2) + eps),
// with the bias corrections bc = 1 - beta^number computed once in double.
AdamCoeffs Coeffs(const OptimizerConfig& config, const UpdateStep& step) {
  const auto t = static_cast<double>(step.number);
  const double bc1 = 1.0 - std::pow(config.beta1, t);
  const double bc2 = 1.0 - std::pow(config.beta2, t);
  return AdamCoeffs{
      .beta1 = static_cast<float>(config.beta1),
      .one_minus_beta1 = static_cast<float>(1.0 - config.beta1),
      .beta2 = static_cast<float>(config.beta2),
      .one_minus_beta2 = static_cast<float>(1.0 - config.beta2),
      .inv_bc1 = static_cast<float>(1.0 / bc1),
      .inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2)),
      .epsilon = static_cast<float>(config.epsilon),
      .weight_decay = static_cast<float>(config.weight_decay),
      .step_size = static_cast<float>(step.lr * step.fraction / bc1),
      .s_inv_bc1 = static_cast<float>(step.fraction / bc1),
      .lr = static_cast<float>(step.lr),
      .s = static_cast<float>(step.fraction),
      .gs = static_cast<float>(step.grad_scale),
  };
}

class AdamRule {
 public:
  static constexpr std::string_view kName = "adam";
  static constexpr int kSlots = 2;  // the first and second moments
  static constexpr bool kCloses = true;
  explicit AdamRule(const OptimizerConfig& config) : config_(config) {}

  auto Whole(const UpdateStep& step) const {
    const AdamCoeffs c = Coeffs(config_, step);
    return [c](float* w, const float* g, float* const* slots, size_t i,
               size_t count) {
      AdamWholeChunk(w + i, g + i, slots[0] + i, slots[1] + i, count, c);
    };
  }
  auto Share(const UpdateStep& step) const {
    const AdamCoeffs c = Coeffs(config_, step);
    return [c](float* w, const float* g, float* const* slots, size_t i,
               size_t count) {
      AdamShareChunk(w + i, g + i, slots[0] + i, slots[1] + i, slots[2] + i,
                     slots[3] + i, count, c);
    };
  }
  auto Close(const UpdateStep& step) const {
    const AdamCoeffs c = Coeffs(config_, step);
    return [c](float* w, float* const* slots, size_t i, size_t count) {
      AdamCloseChunk(w + i, slots[0] + i, slots[1] + i, slots[2] + i,
                     slots[3] + i, count, c);
    };
  }

 private:
  OptimizerConfig config_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> CreateAdamOptimizer(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new ChunkedOptimizer<AdamRule>(config));
}

}  // namespace lockstep
