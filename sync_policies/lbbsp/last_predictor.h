// Predicts that the next clock runs at the speed of the last one: the
// baseline every other predictor must beat.
// Thread-safety: not thread-safe.
#ifndef LOCKSTEP_SYNC_POLICIES_LBBSP_LAST_PREDICTOR_H_
#define LOCKSTEP_SYNC_POLICIES_LBBSP_LAST_PREDICTOR_H_

#include <cstdint>
#include <string>

#include "sync_policies/lbbsp/speed_predictor.h"

namespace lockstep {

class LastPredictor : public SpeedPredictor {
 public:
  std::string name() const override { return "last"; }
  void Observe(double speed, double cpu_available,
               double mem_available) override;
  // The last observed speed; availability is ignored.
  double Predict(double cpu_available, double mem_available) const override;
  uint64_t observations() const override { return observations_; }
  void SaveState(StateWriter* out) const override;
  Status LoadState(StateReader* in) override;

 private:
  double last_ = 0;
  uint64_t observations_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_LBBSP_LAST_PREDICTOR_H_
