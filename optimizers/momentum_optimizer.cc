// The "momentum" optimizer: SGD with momentum, PyTorch style:
// v = mu * v + g'; w -= lr * v (g' = g + wd * w) per whole step
// (shares and clock ends under apply-on-arrival: UpdateStep, optimizer.h).

#include <cmath>

#include "optimizers/chunked.h"
#include "optimizers/chunked_optimizer.h"
#include "optimizers/optimizer_kinds.h"

namespace lockstep {
namespace {

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

class MomentumRule {
 public:
  static constexpr std::string_view kName = "momentum";
  static constexpr int kSlots = 1;  // the velocity
  static constexpr bool kCloses = true;
  explicit MomentumRule(const OptimizerConfig& config)
      : momentum_(static_cast<float>(config.momentum)),
        weight_decay_(static_cast<float>(config.weight_decay)) {}

  auto Whole(const UpdateStep& step) const {
    const auto lr = static_cast<float>(step.lr);
    const float mu = momentum_;
    const float wd = weight_decay_;
    return [lr, mu, wd](float* w, const float* g, float* const* slots, size_t i,
                        size_t count) {
      MomentumWholeChunk(w + i, g + i, slots[0] + i, count, lr, mu, wd);
    };
  }
  auto Share(const UpdateStep& step) const {
    const MomentumShareCoeffs k{static_cast<float>(step.lr * step.fraction),
                                static_cast<float>(step.fraction),
                                static_cast<float>(step.grad_scale), momentum_,
                                weight_decay_};
    return [k](float* w, const float* g, float* const* slots, size_t i,
               size_t count) {
      MomentumShareChunk(w + i, g + i, slots[0] + i, slots[1] + i, slots[2] + i,
                         count, k);
    };
  }
  auto Close(const UpdateStep& step) const {
    const auto lr = static_cast<float>(step.lr);
    const float mu = momentum_;
    return [lr, mu](float* w, float* const* slots, size_t i, size_t count) {
      MomentumCloseChunk(w + i, slots[0] + i, slots[1] + i, slots[2] + i, count,
                         lr, mu);
    };
  }

 private:
  float momentum_;
  float weight_decay_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> CreateMomentumOptimizer(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new ChunkedOptimizer<MomentumRule>(config));
}

}  // namespace lockstep
