// The "adagrad" optimizer: AdaGrad: G += g'^2; w -= lr * g' / (sqrt(G) + eps).
// Thread-safety: immutable after Create; Apply may run concurrently on
// disjoint parameter ranges.
#ifndef LOCKSTEP_OPTIMIZERS_ADAGRAD_OPTIMIZER_H_
#define LOCKSTEP_OPTIMIZERS_ADAGRAD_OPTIMIZER_H_

#include <memory>
#include <string_view>

#include "common/status.h"
#include "optimizers/optimizer.h"

namespace lockstep {

class AdagradOptimizer final : public Optimizer {
 public:
  // Reads the options it uses from `config` (validated by the registry).
  static StatusOr<std::unique_ptr<Optimizer>> Create(
      const OptimizerConfig& config);

  std::string_view name() const override { return "adagrad"; }
  int state_slots() const override { return 1; }

 private:
  void ApplyWhole(float* weights, const float* grad, float* const* slots,
                  size_t n, const UpdateStep& step) const override;
  void ApplyShare(float* weights, const float* grad, float* const* slots,
                  size_t n, const UpdateStep& step) const override;
  void ApplyClose(float* weights, float* const* slots, size_t n,
                  const UpdateStep& step) const override;
  explicit AdagradOptimizer(const OptimizerConfig& config)
      : epsilon_(static_cast<float>(config.epsilon)),
        weight_decay_(static_cast<float>(config.weight_decay)) {}

  float epsilon_;
  float weight_decay_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_OPTIMIZERS_ADAGRAD_OPTIMIZER_H_
