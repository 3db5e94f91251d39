#include "server/optimizer.h"

#include <cmath>
#include <sstream>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace lockstep {
namespace {

// GCC at -O2 vectorizes only loops whose trip count is a known multiple of
// the vector width and which need no runtime alias checks (its "very-cheap"
// cost model). So every kernel works on __restrict chunks of kBlock floats,
// inlined with a constant count, and a last chunk of n % kBlock.
constexpr size_t kBlock = 16;

template <typename Chunk>
inline void ForEachChunk(size_t n, Chunk&& chunk) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) chunk(i, kBlock);
  if (i < n) chunk(i, n - i);
}

inline void SgdChunk(float* __restrict w, const float* __restrict g,
                     size_t count, float lr, float wd) {
  for (size_t j = 0; j < count; ++j) w[j] -= lr * (g[j] + wd * w[j]);
}

inline void MomentumChunk(float* __restrict w, const float* __restrict g,
                          float* __restrict v, size_t count, float lr, float mu,
                          float wd) {
  for (size_t j = 0; j < count; ++j) {
    const float velocity = mu * v[j] + (g[j] + wd * w[j]);
    v[j] = velocity;
    w[j] -= lr * velocity;
  }
}

struct AdamCoeffs {
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float step_size;     // lr / (1 - beta1^step)
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^step)
  float epsilon, weight_decay;
};

// Square roots of x[0, kBlock). A plain std::sqrt loop does not vectorize
// because of errno handling (-fmath-errno); the inputs here are never
// negative, so the vector instruction gives the same, correctly rounded,
// results.
inline void SqrtBlock(float* x) {
#if defined(__SSE2__)
  for (size_t j = 0; j < kBlock; j += 4) {
    _mm_storeu_ps(x + j, _mm_sqrt_ps(_mm_loadu_ps(x + j)));
  }
#else
  for (size_t j = 0; j < kBlock; ++j) x[j] = std::sqrt(x[j]);
#endif
}

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

class SgdOptimizer final : public Optimizer {
 public:
  explicit SgdOptimizer(const OptimizerConfig& config)
      : weight_decay_(static_cast<float>(config.weight_decay)) {}
  std::string_view name() const override { return "sgd"; }
  int state_slots() const override { return 0; }
  void Apply(float* weights, const float* grad, float* const* /*slots*/,
             size_t n, double lr, int64_t /*step*/) const override {
    const float lr_f = static_cast<float>(lr);
    ForEachChunk(n, [&](size_t i, size_t count) {
      SgdChunk(weights + i, grad + i, count, lr_f, weight_decay_);
    });
  }

 private:
  float weight_decay_;
};

class MomentumOptimizer final : public Optimizer {
 public:
  explicit MomentumOptimizer(const OptimizerConfig& config)
      : momentum_(static_cast<float>(config.momentum)),
        weight_decay_(static_cast<float>(config.weight_decay)) {}
  std::string_view name() const override { return "momentum"; }
  int state_slots() const override { return 1; }
  void Apply(float* weights, const float* grad, float* const* slots, size_t n,
             double lr, int64_t /*step*/) const override {
    const float lr_f = static_cast<float>(lr);
    float* velocity = slots[0];
    ForEachChunk(n, [&](size_t i, size_t count) {
      MomentumChunk(weights + i, grad + i, velocity + i, count, lr_f, momentum_,
                    weight_decay_);
    });
  }

 private:
  float momentum_;
  float weight_decay_;
};

class AdamOptimizer final : public Optimizer {
 public:
  explicit AdamOptimizer(const OptimizerConfig& config) : config_(config) {}
  std::string_view name() const override { return "adam"; }
  int state_slots() const override { return 2; }
  void Apply(float* weights, const float* grad, float* const* slots, size_t n,
             double lr, int64_t step) const override {
    const AdamCoeffs c = Coeffs(lr, step);
    float* m = slots[0];
    float* v = slots[1];
    ForEachChunk(n, [&](size_t i, size_t count) {
      AdamChunk(weights + i, grad + i, m + i, v + i, count, c);
    });
  }

 private:
  // mhat / (sqrt(vhat) + eps) == (m / bc1) / (sqrt(v) / sqrt(bc2) + eps),
  // with the bias corrections bc = 1 - beta^step computed once in double.
  AdamCoeffs Coeffs(double lr, int64_t step) const {
    const double t = static_cast<double>(step);
    const double bc1 = 1.0 - std::pow(config_.beta1, t);
    const double bc2 = 1.0 - std::pow(config_.beta2, t);
    return AdamCoeffs{
        .beta1 = static_cast<float>(config_.beta1),
        .one_minus_beta1 = static_cast<float>(1.0 - config_.beta1),
        .beta2 = static_cast<float>(config_.beta2),
        .one_minus_beta2 = static_cast<float>(1.0 - config_.beta2),
        .step_size = static_cast<float>(lr / bc1),
        .inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2)),
        .epsilon = static_cast<float>(config_.epsilon),
        .weight_decay = static_cast<float>(config_.weight_decay),
    };
  }

  OptimizerConfig config_;
};

class AdagradOptimizer final : public Optimizer {
 public:
  explicit AdagradOptimizer(const OptimizerConfig& config)
      : epsilon_(static_cast<float>(config.epsilon)),
        weight_decay_(static_cast<float>(config.weight_decay)) {}
  std::string_view name() const override { return "adagrad"; }
  int state_slots() const override { return 1; }
  void Apply(float* weights, const float* grad, float* const* slots, size_t n,
             double lr, int64_t /*step*/) const override {
    const float lr_f = static_cast<float>(lr);
    float* acc = slots[0];
    ForEachChunk(n, [&](size_t i, size_t count) {
      AdagradChunk(weights + i, grad + i, acc + i, count, lr_f, epsilon_,
                   weight_decay_);
    });
  }

 private:
  float epsilon_;
  float weight_decay_;
};

bool InUnitInterval(double x) { return x >= 0.0 && x < 1.0; }

Status ValidateConfig(const OptimizerConfig& config) {
  if (!InUnitInterval(config.momentum) || !InUnitInterval(config.beta1) ||
      !InUnitInterval(config.beta2)) {
    return InvalidArgument("optimizer " + config.name +
                           ": momentum, beta1 and beta2 must be in [0, 1)");
  }
  if (!(config.epsilon > 0.0)) {
    return InvalidArgument("optimizer " + config.name +
                           ": epsilon must be > 0");
  }
  if (!(config.weight_decay >= 0.0)) {
    return InvalidArgument("optimizer " + config.name +
                           ": weight_decay must be >= 0");
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> Optimizer::KnownNames() {
  return {"sgd", "momentum", "adam", "adagrad"};
}

StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(
    const OptimizerConfig& config) {
  std::unique_ptr<Optimizer> optimizer;
  if (config.name == "sgd") {
    optimizer = std::make_unique<SgdOptimizer>(config);
  } else if (config.name == "momentum") {
    optimizer = std::make_unique<MomentumOptimizer>(config);
  } else if (config.name == "adam") {
    optimizer = std::make_unique<AdamOptimizer>(config);
  } else if (config.name == "adagrad") {
    optimizer = std::make_unique<AdagradOptimizer>(config);
  } else {
    std::ostringstream known;
    for (const std::string& name : KnownNames()) {
      known << (known.tellp() > 0 ? ", " : "") << name;
    }
    return InvalidArgument("unknown optimizer '" + config.name +
                           "'; known optimizers: " + known.str());
  }
  LS_RETURN_IF_ERROR(ValidateConfig(config));
  return optimizer;
}

}  // namespace lockstep
