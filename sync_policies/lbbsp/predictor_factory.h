// Making LB-BSP's speed predictors by kind. Apart from the interface
// (speed_predictor.h), so that the interface does not depend on its
// implementations.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_SYNC_POLICIES_LBBSP_PREDICTOR_FACTORY_H_
#define LOCKSTEP_SYNC_POLICIES_LBBSP_PREDICTOR_FACTORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/registry.h"
#include "sync_policies/lbbsp/speed_predictor.h"

namespace lockstep {

enum class PredictorKind { kLast, kEma, kNarx };

struct PredictorFactory {
  const char* name;  // "narx"
  std::vector<std::string> forms;
  PredictorKind kind;
  // A fresh predictor; `seed` fixes NARX's initial weights.
  std::unique_ptr<SpeedPredictor> (*make)(uint64_t seed);
};

// Every predictor, by the name an "lbbsp:analytical:NAME" spec gives.
const Registry<PredictorFactory>& PredictorRegistry();

// "last", "ema", "narx".
std::string PredictorKindName(PredictorKind kind);

// A fresh predictor of `kind`; `seed` fixes NARX's initial weights.
std::unique_ptr<SpeedPredictor> MakeSpeedPredictor(PredictorKind kind,
                                                   uint64_t seed);

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_LBBSP_PREDICTOR_FACTORY_H_
