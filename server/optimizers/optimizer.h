// Server-side optimizers: the update rule a shard applies to its parameters
// once a clock's aggregated gradient is known. One optimizer per file pair
// in this folder (sgd_optimizer.h, ...), registered by name in
// optimizer_registry.cc.
// Thread-safety: an Optimizer is immutable after Create; Apply is const and
// may run concurrently on disjoint parameter ranges.
#ifndef LOCKSTEP_SERVER_OPTIMIZERS_OPTIMIZER_H_
#define LOCKSTEP_SERVER_OPTIMIZERS_OPTIMIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"

namespace lockstep {

// The most per-parameter state slots any optimizer uses; stores size their
// fixed slot-pointer arrays with it.
inline constexpr int kMaxOptimizerSlots = 4;

// Options of every optimizer; each uses only the fields it names. Defaults
// are PyTorch's, so results compare with a single-process baseline.
struct OptimizerConfig {
  std::string name;  // a registered name: "sgd", "momentum", "adam", ...
  double momentum = 0.9;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  // L2 penalty folded into the gradient: g' = g + weight_decay * w (coupled
  // decay, as PyTorch's SGD and Adam do; not AdamW).
  double weight_decay = 0;

  // The optimizer and options a job names.
  static OptimizerConfig Of(const JobConfig& job);
};

// The size of one update. A BSP-like commit is one whole step of a clock
// (fraction 1). Under the apply-on-arrival policies (SSP, ASP) one push
// is a fraction n_w / X of its clock, and every optimizer takes it as that
// fraction of a step, so a clock's worth of pushes (fractions summing to
// 1) moves the model as far as one BSP step; with one worker a push is a
// whole step and the policies give BSP's model bit for bit. Per rule, with
// g' = g + weight_decay * w and s the fraction:
//   sgd       w -= lr s g'                          (decay scaled too)
//   momentum  v = mu^s v + (1 - mu^s)/(1 - mu) g';  w -= lr s v
//   adam      m = b1^s m + (1 - b1^s) g';  v = b2^s v + (1 - b2^s) g'^2;
//             w -= lr s mhat / (sqrt(vhat) + eps), bias corrections at
//             `time` (the clocks' worth of updates applied, fractional)
//   adagrad   G += s g'^2;  w -= lr s g' / (sqrt(G) + eps)
// For a constant gradient, a clock of fractional updates moves the weights
// exactly as one whole step under sgd (to first order in lr) and adam;
// under momentum the ratio is 1 - O(mu^c) after c clocks, under adagrad
// 1 + O(1/c) (tests/server/optimizers/fractional_step_test.cc).
struct UpdateStep {
  double lr = 0;
  double fraction = 1;  // > 0; 1 is a whole step
  double time = 1;      // sum of the fractions applied, this one included

  // The `step`-th (1-based) whole step at rate `lr`.
  static UpdateStep Whole(double lr, int64_t step) {
    return {lr, 1.0, static_cast<double>(step)};
  }
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // The registered optimizer `config.name` names (optimizer_registry.cc).
  // InvalidArgument for an unknown name
  // (the message lists the known ones) or an out-of-range option:
  // momentum, beta1, beta2 in [0, 1), epsilon > 0, weight_decay >= 0.
  static StatusOr<std::unique_ptr<Optimizer>> Create(
      const OptimizerConfig& config);
  // The registered names, in registration order.
  static std::vector<std::string> KnownNames();
  // What Create would say about the job's optimizer and its options.
  static Status Validate(const JobConfig& job);

  virtual std::string_view name() const = 0;
  // Per-parameter state floats: sgd 0, momentum 1 (velocity), adam 2
  // (slot 0: first moment m, slot 1: second moment v), adagrad 1 (sum of
  // squared gradients).
  virtual int state_slots() const = 0;

  // One update of n parameters with gradient `grad`, of the size `step`
  // says (UpdateStep above).
  // `slots[s]` points to the n floats of state slot s (s < state_slots());
  // per-slot pointers let a store keep each slot contiguous over its whole
  // range (slot-major) and still update any sub-range.
  // Arithmetic is in float, so results are bit-identical however the
  // parameters are split into calls.
  // REQUIRES: step.fraction > 0; step.time > 0; weights, grad and the slots
  // do not overlap; slots has state_slots() entries (may be null when 0).
  virtual void Apply(float* weights, const float* grad, float* const* slots,
                     size_t n, const UpdateStep& step) const = 0;
  // The whole step number `step` (1-based) at rate `lr`.
  void Apply(float* weights, const float* grad, float* const* slots, size_t n,
             double lr, int64_t step) const {
    Apply(weights, grad, slots, n, UpdateStep::Whole(lr, step));
  }
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_OPTIMIZERS_OPTIMIZER_H_
