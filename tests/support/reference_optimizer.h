// An optimizer and its per-parameter state, for the single-process
// reference training the equivalence tests compare a job against.
// Thread-safety: one owner.
#ifndef LOCKSTEP_TESTS_SUPPORT_REFERENCE_OPTIMIZER_H_
#define LOCKSTEP_TESTS_SUPPORT_REFERENCE_OPTIMIZER_H_

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "optimizers/optimizer.h"

namespace lockstep {

class ReferenceOptimizer {
 public:
  ReferenceOptimizer(const OptimizerConfig& config, size_t params)
      : params_(params) {
    auto opt = Optimizer::Create(config);
    EXPECT_TRUE(opt.ok()) << opt.status().ToString();
    if (!opt.ok()) return;
    opt_ = std::move(opt).value();
    state_.resize(params * opt_->state_slots());
    for (int s = 0; s < opt_->state_slots(); ++s) {
      slots_.push_back(state_.data() + s * params);
    }
  }

  // Whole step `step` (1-based) at rate `lr`.
  void Apply(std::vector<float>& params, const std::vector<float>& grad,
             double lr, int64_t step) {
    ASSERT_TRUE(opt_ != nullptr);
    ASSERT_EQ(params.size(), params_);
    opt_->Apply(params.data(), grad.data(), slots_.data(), params_, lr, step);
  }

 private:
  size_t params_;
  std::unique_ptr<Optimizer> opt_;
  std::vector<float> state_;
  std::vector<float*> slots_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_REFERENCE_OPTIMIZER_H_
