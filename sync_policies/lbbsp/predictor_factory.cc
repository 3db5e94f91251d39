#include "sync_policies/lbbsp/predictor_factory.h"

#include "sync_policies/lbbsp/ema_predictor.h"
#include "sync_policies/lbbsp/last_predictor.h"
#include "sync_policies/lbbsp/narx_predictor.h"

namespace lockstep {

std::string PredictorKindName(PredictorKind kind) {
  switch (kind) {
    case PredictorKind::kLast:
      return "last";
    case PredictorKind::kEma:
      return "ema";
    case PredictorKind::kNarx:
      return "narx";
  }
  return "?";
}

std::unique_ptr<SpeedPredictor> MakeSpeedPredictor(PredictorKind kind,
                                                   uint64_t seed) {
  switch (kind) {
    case PredictorKind::kLast:
      return std::make_unique<LastPredictor>();
    case PredictorKind::kEma:
      return std::make_unique<EmaPredictor>();
    case PredictorKind::kNarx:
      return std::make_unique<NarxPredictor>(seed);
  }
  return nullptr;
}

}  // namespace lockstep
