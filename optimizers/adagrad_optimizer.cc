// The "adagrad" optimizer: AdaGrad: G += g'^2; w -= lr * g' / (sqrt(G) + eps).

#include <cmath>

#include "optimizers/chunked.h"
#include "optimizers/chunked_optimizer.h"
#include "optimizers/optimizer_kinds.h"

namespace lockstep {
namespace {

using optimizers::kBlock;
using optimizers::SqrtBlock;

// G += g'^2; w -= lr g' / (sqrt(G) + eps).
inline void AdagradWholeChunk(float* __restrict w, const float* __restrict g,
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

struct AdagradShareCoeffs {
  float lr_s, s, gs, eps, wd;
};

// d = g' / (sqrt(G + g'^2) + eps) against the clock's G, which stays as it
// is until the clock closes.
inline void AdagradShareChunk(float* __restrict w, const float* __restrict g,
                              const float* __restrict sum,
                              float* __restrict acc, float* __restrict moved,
                              size_t count, const AdagradShareCoeffs& k) {
  float grad[kBlock] = {};
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    grad[j] = k.gs * g[j] + k.wd * w[j];
    root[j] = sum[j] + grad[j] * grad[j];
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    // As WholeChunk writes it: one share of a whole clock is bit for bit a
    // whole step.
    w[j] -= k.lr_s * grad[j] / (root[j] + k.eps);
    acc[j] += k.s * grad[j];
    moved[j] += k.s * grad[j] / (root[j] + k.eps);
  }
}

// G takes the clock's gradient C, and its direction replaces P.
inline void AdagradCloseChunk(float* __restrict w, float* __restrict sum,
                              float* __restrict acc, float* __restrict moved,
                              size_t count, float lr, float eps) {
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    root[j] = sum[j] = sum[j] + acc[j] * acc[j];
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    w[j] += lr * (moved[j] - acc[j] / (root[j] + eps));
    acc[j] = 0.0f;
    moved[j] = 0.0f;
  }
}

class AdagradRule {
 public:
  static constexpr std::string_view kName = "adagrad";
  static constexpr int kSlots = 1;  // the sum of squared gradients
  static constexpr bool kCloses = true;
  explicit AdagradRule(const OptimizerConfig& config)
      : epsilon_(static_cast<float>(config.epsilon)),
        weight_decay_(static_cast<float>(config.weight_decay)) {}

  auto Whole(const UpdateStep& step) const {
    const auto lr = static_cast<float>(step.lr);
    const float eps = epsilon_;
    const float wd = weight_decay_;
    return [lr, eps, wd](float* w, const float* g, float* const* slots,
                         size_t i, size_t count) {
      AdagradWholeChunk(w + i, g + i, slots[0] + i, count, lr, eps, wd);
    };
  }
  auto Share(const UpdateStep& step) const {
    const AdagradShareCoeffs k{static_cast<float>(step.lr * step.fraction),
                               static_cast<float>(step.fraction),
                               static_cast<float>(step.grad_scale), epsilon_,
                               weight_decay_};
    return [k](float* w, const float* g, float* const* slots, size_t i,
               size_t count) {
      AdagradShareChunk(w + i, g + i, slots[0] + i, slots[1] + i, slots[2] + i,
                        count, k);
    };
  }
  auto Close(const UpdateStep& step) const {
    const auto lr = static_cast<float>(step.lr);
    const float eps = epsilon_;
    return [lr, eps](float* w, float* const* slots, size_t i, size_t count) {
      AdagradCloseChunk(w + i, slots[0] + i, slots[1] + i, slots[2] + i, count,
                        lr, eps);
    };
  }

 private:
  float epsilon_;
  float weight_decay_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> CreateAdagradOptimizer(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new ChunkedOptimizer<AdagradRule>(config));
}

}  // namespace lockstep
