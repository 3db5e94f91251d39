#include "sync_policies/last_predictor.h"

#include <cmath>

namespace lockstep {

void LastPredictor::Observe(double speed, double /*cpu_available*/,
                            double /*mem_available*/) {
  if (!std::isfinite(speed) || speed <= 0) return;
  last_ = speed;
  ++observations_;
}

double LastPredictor::Predict(double /*cpu_available*/,
                              double /*mem_available*/) const {
  return last_;
}

}  // namespace lockstep
