// Per-worker speed predictors for LB-BSP's analytical quota method: each
// learns one worker's sample-processing speed (samples/s) from the clocks
// it finished and predicts the next clock's, so quotas can be set in
// proportion before the clock starts.
// Thread-safety: not thread-safe; one instance per worker.
#ifndef LOCKSTEP_SYNC_POLICIES_LBBSP_SPEED_PREDICTOR_H_
#define LOCKSTEP_SYNC_POLICIES_LBBSP_SPEED_PREDICTOR_H_

#include <cmath>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "sync_policies/policy_state.h"

namespace lockstep {

class SpeedPredictor {
 public:
  virtual ~SpeedPredictor() = default;

  // "last", "ema" or "narx".
  virtual std::string name() const = 0;
  // Records the speed measured over one clock (samples/s; non-positive or
  // non-finite values are ignored) and the worker's CPU and memory
  // availability during that clock (shares in [0, 1]).
  virtual void Observe(double speed, double cpu_available,
                       double mem_available) = 0;
  // The predicted speed of the next clock, given the newest availability
  // readings (those of the last observed clock: a clock's own readings
  // exist only once it ran). 0 before the first observation.
  virtual double Predict(double cpu_available, double mem_available) const = 0;
  // Number of speeds observed.
  virtual uint64_t observations() const = 0;
  // Everything Observe has learned, so a restored predictor predicts
  // exactly what this one would.
  virtual void SaveState(StateWriter* out) const = 0;
  // Reads what SaveState wrote, into a predictor made by
  // MakeSpeedPredictor (predictor_factory.h) with the same kind and seed.
  virtual Status LoadState(StateReader* in) = 0;
};

// Root-mean-square error of predictions against what was then observed.
class RmseTracker {
 public:
  void Add(double predicted, double observed) {
    const double e = predicted - observed;
    sum_sq_ += e * e;
    ++count_;
  }
  // 0 before the first sample.
  double rmse() const { return count_ == 0 ? 0 : std::sqrt(sum_sq_ / count_); }
  uint64_t count() const { return count_; }
  double sum_sq() const { return sum_sq_; }
  // Continues from the sums of an earlier tracker.
  void Restore(double sum_sq, uint64_t count) {
    sum_sq_ = sum_sq;
    count_ = count;
  }

 private:
  double sum_sq_ = 0;
  uint64_t count_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_LBBSP_SPEED_PREDICTOR_H_
