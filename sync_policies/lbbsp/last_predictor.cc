#include "sync_policies/lbbsp/last_predictor.h"

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

void LastPredictor::SaveState(StateWriter* out) const {
  out->Put(last_);
  out->Put(static_cast<double>(observations_));
}

Status LastPredictor::LoadState(StateReader* in) {
  LS_ASSIGN_OR_RETURN(last_, in->Get());
  LS_ASSIGN_OR_RETURN(observations_, in->GetCount());
  return Status::Ok();
}

}  // namespace lockstep
