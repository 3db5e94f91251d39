// Predicts the exponential moving average of the observed speeds,
// v <- alpha * speed + (1 - alpha) * v, starting at the first speed. The
// default alpha 0.5 halves the weight of a clock per clock: it smooths
// one-clock noise yet follows a lasting change within a few clocks.
// Thread-safety: not thread-safe.
#ifndef LOCKSTEP_SYNC_POLICIES_LBBSP_EMA_PREDICTOR_H_
#define LOCKSTEP_SYNC_POLICIES_LBBSP_EMA_PREDICTOR_H_

#include <cstdint>
#include <string>

#include "sync_policies/lbbsp/speed_predictor.h"

namespace lockstep {

class EmaPredictor : public SpeedPredictor {
 public:
  static constexpr double kDefaultAlpha = 0.5;

  // REQUIRES: 0 < alpha <= 1.
  explicit EmaPredictor(double alpha = kDefaultAlpha);

  std::string name() const override { return "ema"; }
  void Observe(double speed, double cpu_available,
               double mem_available) override;
  // The moving average; availability is ignored.
  double Predict(double cpu_available, double mem_available) const override;
  uint64_t observations() const override { return observations_; }
  void SaveState(StateWriter* out) const override;
  Status LoadState(StateReader* in) override;

 private:
  double alpha_;
  double average_ = 0;
  uint64_t observations_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_LBBSP_EMA_PREDICTOR_H_
