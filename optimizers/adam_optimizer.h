// The "adam" optimizer: Adam (Kingma & Ba) with bias correction and
// coupled weight decay (as PyTorch's Adam; not AdamW).
// Thread-safety: immutable after Create; Apply may run concurrently on
// disjoint parameter ranges.
#ifndef LOCKSTEP_OPTIMIZERS_ADAM_OPTIMIZER_H_
#define LOCKSTEP_OPTIMIZERS_ADAM_OPTIMIZER_H_

#include <memory>
#include <string_view>

#include "common/status.h"
#include "optimizers/optimizer.h"

namespace lockstep {

class AdamOptimizer final : public Optimizer {
 public:
  // Reads the options it uses from `config` (validated by the registry).
  static StatusOr<std::unique_ptr<Optimizer>> Create(
      const OptimizerConfig& config);

  std::string_view name() const override { return "adam"; }
  int state_slots() const override { return 2; }

 private:
  void ApplyWhole(float* weights, const float* grad, float* const* slots,
                  size_t n, const UpdateStep& step) const override;
  void ApplyShare(float* weights, const float* grad, float* const* slots,
                  size_t n, const UpdateStep& step) const override;
  void ApplyClose(float* weights, float* const* slots, size_t n,
                  const UpdateStep& step) const override;
  explicit AdamOptimizer(const OptimizerConfig& config) : config_(config) {}

  OptimizerConfig config_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_OPTIMIZERS_ADAM_OPTIMIZER_H_
