// Server-side optimizers: the update rule a shard applies to its parameters
// once a clock's aggregated gradient is known. One optimizer per file pair
// in this folder (sgd_optimizer.h, ...), registered by name in
// optimizer_registry.cc.
// Thread-safety: an Optimizer is immutable after Create; Apply is const and
// may run concurrently on disjoint parameter ranges.
#ifndef LOCKSTEP_OPTIMIZERS_OPTIMIZER_H_
#define LOCKSTEP_OPTIMIZERS_OPTIMIZER_H_

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

// What one update is (docs/design.md, "Sync policies"). A BSP-like commit is
// one whole step with the clock's batch-weighted mean gradient. Under the
// apply-on-arrival policies (SSP, ASP) a push is a share s = n_w / X of
// the shard's current *logical clock* (X samples of global progress):
// the optimizer's state (velocity, moments, the schedule) advances once
// per logical clock, not per push, and a push is applied against the state
// of the clock it lands in. With g' = grad_scale * g + weight_decay * w:
//   kShare  d = the optimizer's step direction for g' from the clock's state
//           (momentum: mu v + g'; adam: mhat / (sqrt(vhat) + eps) with the
//           moments advanced by g' alone; adagrad: g' / (sqrt(G2 + g'^2) +
//           eps); sgd: g'); w -= lr s d; and, for an optimizer with state,
//           C += s g' (the clock's gradient so far) and P += s d (how far
//           the clock's pushes moved the weights, in units of lr).
//   kClose  once the shard's shares of a clock sum to 1: the state advances
//           by one whole step with gradient C, whose direction D replaces
//           the pushes' provisional ones: w += lr (P - D); C = P = 0.
// So when every push of a clock was computed at the same weights (under
// SSP with s = 0, when a clock's pulls all come before its pushes), the
// clock ends exactly where BSP's one whole step with the mean gradient
// ends, for every optimizer (momentum and sgd are linear in g, so P == D
// and the correction is 0 up to rounding; Adam and AdaGrad build their
// moments from the clock's X-sample mean, as BSP does, not from
// n_w-sample pushes). Weight decay is one step's worth per clock, each
// share's part taken at the weights it lands on, so with decay the match is
// to first order in lr x weight_decay. A per-push fractional rule is not
// equivalent: for momentum it is unstable at lr x curvature > 0.27, BSP at
// > 3.8 (tests/server/shard/arrival_clock_test.cc).
enum class StepKind : uint8_t { kWhole, kShare, kClose };

struct UpdateStep {
  StepKind kind = StepKind::kWhole;
  double lr = 0;
  // The 1-based number of the whole step being made: the commit's clock +
  // 1, or the logical clock a share lands in + 1 (bias corrections).
  int64_t number = 1;
  double fraction = 1;    // kShare: the push's share of its clock, (0, 1]
  double grad_scale = 1;  // kShare: the weight of its gradient (staleness)

  // The `number`-th (1-based) whole step at rate `lr`.
  static UpdateStep Whole(double lr, int64_t number) {
    return {StepKind::kWhole, lr, number, 1.0, 1.0};
  }
  // A share `fraction` of logical clock `number` - 1, its gradient weighed
  // by `grad_scale`.
  static UpdateStep Share(double lr, int64_t number, double fraction,
                          double grad_scale = 1.0) {
    return {StepKind::kShare, lr, number, fraction, grad_scale};
  }
  // The end of logical clock `number` - 1, at the rate its shares used.
  static UpdateStep Close(double lr, int64_t number) {
    return {StepKind::kClose, lr, number, 1.0, 1.0};
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
  // Per-parameter state floats of whole steps: sgd 0, momentum 1
  // (velocity), adam 2 (slot 0: first moment m, slot 1: second moment v),
  // adagrad 1 (sum of squared gradients).
  virtual int state_slots() const = 0;
  // Per-parameter state floats under apply-on-arrival: state_slots(), then,
  // for an optimizer with state, C and P (UpdateStep): slots
  // state_slots() and state_slots() + 1. Zero C and P are a clock boundary.
  int ArrivalSlots() const {
    return state_slots() == 0 ? 0 : state_slots() + 2;
  }
  // The slots a store applying `kind` steps keeps.
  int SlotsFor(bool on_arrival) const {
    return on_arrival ? ArrivalSlots() : state_slots();
  }

  // One update of n parameters, of the kind `step` says (UpdateStep).
  // `grad` holds the n gradient values (kWhole, kShare; unused by kClose,
  // may be null). `slots[s]` points to the n floats of state slot s:
  // state_slots() of them for kWhole, ArrivalSlots() otherwise (may be
  // null when 0); per-slot pointers let a store keep each slot contiguous
  // over its whole range (slot-major) and still update any sub-range.
  // Arithmetic is in float, so results are bit-identical however the
  // parameters are split into calls.
  // REQUIRES: step.number >= 1; kShare: 0 < fraction <= 1; weights, grad
  // and the slots do not overlap.
  void Apply(float* weights, const float* grad, float* const* slots, size_t n,
             const UpdateStep& step) const {
    switch (step.kind) {
      case StepKind::kWhole:
        return ApplyWhole(weights, grad, slots, n, step);
      case StepKind::kShare:
        return ApplyShare(weights, grad, slots, n, step);
      case StepKind::kClose:
        return ApplyClose(weights, slots, n, step);
    }
  }
  // The whole step number `step` (1-based) at rate `lr`.
  void Apply(float* weights, const float* grad, float* const* slots, size_t n,
             double lr, int64_t step) const {
    ApplyWhole(weights, grad, slots, n, UpdateStep::Whole(lr, step));
  }

 private:
  // The three kinds of UpdateStep, each as its rule in UpdateStep says.
  virtual void ApplyWhole(float* weights, const float* grad,
                          float* const* slots, size_t n,
                          const UpdateStep& step) const = 0;
  virtual void ApplyShare(float* weights, const float* grad,
                          float* const* slots, size_t n,
                          const UpdateStep& step) const = 0;
  virtual void ApplyClose(float* weights, float* const* slots, size_t n,
                          const UpdateStep& step) const = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_OPTIMIZERS_OPTIMIZER_H_
