// The "sgd" optimizer: plain SGD: w -= lr * (g + wd * w).
// Thread-safety: immutable after Create; Apply may run concurrently on
// disjoint parameter ranges.
#ifndef LOCKSTEP_OPTIMIZERS_SGD_OPTIMIZER_H_
#define LOCKSTEP_OPTIMIZERS_SGD_OPTIMIZER_H_

#include <memory>
#include <string_view>

#include "common/status.h"
#include "optimizers/optimizer.h"

namespace lockstep {

class SgdOptimizer final : public Optimizer {
 public:
  // Reads the options it uses from `config` (validated by the registry).
  static StatusOr<std::unique_ptr<Optimizer>> Create(
      const OptimizerConfig& config);

  std::string_view name() const override { return "sgd"; }
  int state_slots() const override { return 0; }

 private:
  void ApplyWhole(float* weights, const float* grad, float* const* slots,
                  size_t n, const UpdateStep& step) const override;
  void ApplyShare(float* weights, const float* grad, float* const* slots,
                  size_t n, const UpdateStep& step) const override;
  void ApplyClose(float* weights, float* const* slots, size_t n,
                  const UpdateStep& step) const override;
  explicit SgdOptimizer(const OptimizerConfig& config)
      : weight_decay_(static_cast<float>(config.weight_decay)) {}

  float weight_decay_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_OPTIMIZERS_SGD_OPTIMIZER_H_
