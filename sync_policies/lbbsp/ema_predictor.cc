#include "sync_policies/lbbsp/ema_predictor.h"

#include <cassert>
#include <cmath>

namespace lockstep {

EmaPredictor::EmaPredictor(double alpha) : alpha_(alpha) {
  assert(alpha > 0 && alpha <= 1);
}

void EmaPredictor::Observe(double speed, double /*cpu_available*/,
                           double /*mem_available*/) {
  if (!std::isfinite(speed) || speed <= 0) return;
  average_ =
      observations_ == 0 ? speed : alpha_ * speed + (1 - alpha_) * average_;
  ++observations_;
}

double EmaPredictor::Predict(double /*cpu_available*/,
                             double /*mem_available*/) const {
  return average_;
}

void EmaPredictor::SaveState(StateWriter* out) const {
  out->Put(average_);
  out->Put(static_cast<double>(observations_));
}

Status EmaPredictor::LoadState(StateReader* in) {
  LS_ASSIGN_OR_RETURN(average_, in->Get());
  LS_ASSIGN_OR_RETURN(observations_, in->GetCount());
  return Status::Ok();
}

}  // namespace lockstep
