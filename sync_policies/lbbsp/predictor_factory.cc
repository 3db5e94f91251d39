#include "sync_policies/lbbsp/predictor_factory.h"

#include "sync_policies/lbbsp/ema_predictor.h"
#include "sync_policies/lbbsp/last_predictor.h"
#include "sync_policies/lbbsp/narx_predictor.h"

namespace lockstep {

const Registry<PredictorFactory>& PredictorRegistry() {
  static const auto* registry = new Registry<PredictorFactory>(
      "predictor", {
                       {"last",
                        {"last"},
                        PredictorKind::kLast,
                        [](uint64_t) -> std::unique_ptr<SpeedPredictor> {
                          return std::make_unique<LastPredictor>();
                        }},
                       {"ema",
                        {"ema"},
                        PredictorKind::kEma,
                        [](uint64_t) -> std::unique_ptr<SpeedPredictor> {
                          return std::make_unique<EmaPredictor>();
                        }},
                       {"narx",
                        {"narx"},
                        PredictorKind::kNarx,
                        [](uint64_t seed) -> std::unique_ptr<SpeedPredictor> {
                          return std::make_unique<NarxPredictor>(seed);
                        }},
                   });
  return *registry;
}

namespace {

const PredictorFactory& FactoryOf(PredictorKind kind) {
  for (const PredictorFactory& f : PredictorRegistry().entries()) {
    if (f.kind == kind) return f;
  }
  return PredictorRegistry()
      .entries()
      .back();  // unreachable: every kind is listed
}

}  // namespace

std::string PredictorKindName(PredictorKind kind) {
  return FactoryOf(kind).name;
}

std::unique_ptr<SpeedPredictor> MakeSpeedPredictor(PredictorKind kind,
                                                   uint64_t seed) {
  return FactoryOf(kind).make(seed);
}

}  // namespace lockstep
