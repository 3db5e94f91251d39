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

  // One update of n parameters with gradient `grad` and step size `lr`.
  // `slots[s]` points to the n floats of state slot s (s < state_slots());
  // per-slot pointers let a store keep each slot contiguous over its whole
  // range (slot-major) and still update any sub-range. `step` is the
  // 1-based number of this update (Adam's bias correction).
  // Arithmetic is in float, so results are bit-identical however the
  // parameters are split into calls.
  // REQUIRES: step >= 1; weights, grad and the slots do not overlap; slots
  // has state_slots() entries (may be null when that is 0).
  virtual void Apply(float* weights, const float* grad, float* const* slots,
                     size_t n, double lr, int64_t step) const = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_OPTIMIZERS_OPTIMIZER_H_
