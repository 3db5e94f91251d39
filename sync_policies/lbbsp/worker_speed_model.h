// One LB-BSP worker's speed model for the analytical quota method: its
// predictor, the worker's latest CPU and memory readings, the prediction
// made for the clock it reports next, and how far off the predictions were
// (RMSE). LbBspPolicy keeps one per live worker and splits X by what they
// predict.
// Thread-safety: not thread-safe; owned by the policy.
#ifndef LOCKSTEP_SYNC_POLICIES_LBBSP_WORKER_SPEED_MODEL_H_
#define LOCKSTEP_SYNC_POLICIES_LBBSP_WORKER_SPEED_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "common/status.h"
#include "sync_policies/lbbsp/speed_predictor.h"
#include "sync_policies/policy_state.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

class WorkerSpeedModel {
 public:
  // REQUIRES: predictor != nullptr (fresh, before its first observation).
  explicit WorkerSpeedModel(std::unique_ptr<SpeedPredictor> predictor);

  // Takes the worker's report of a committed clock: its readings always;
  // with samples and compute time, its speed (samples/s) goes to the
  // predictor and is scored against the prediction made for it.
  void Observe(const ClockReport& report);
  // The predicted speed for `clock` from the latest readings, remembered
  // for scoring and for PredictedFor; 0 before the first observation (the
  // split then weighs the worker at the mean).
  double PredictFor(int64_t clock);
  // The speed predicted for `clock`, if one was (until it is scored).
  std::optional<double> PredictedFor(int64_t clock) const;
  // The outstanding prediction, for metrics.
  std::optional<double> predicted() const { return predicted_; }
  // RMSE of the predictions scored so far; nullopt without any.
  std::optional<double> Rmse() const;

  // The readings, the outstanding prediction, the RMSE sums, then the
  // predictor's state.
  void Save(StateWriter* out) const;
  // Reads what Save wrote. A saved prediction is for `clock`, the clock a
  // resumed job starts at (rounds are saved after a commit).
  Status Load(StateReader* in, int64_t clock);

 private:
  std::unique_ptr<SpeedPredictor> predictor_;
  RmseTracker rmse_;
  std::optional<double> predicted_;  // for the next clock it reports
  int64_t predicted_clock_ = -1;     // which clock that is
  double cpu_available_ = 1;         // its latest readings
  double mem_available_ = 1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_LBBSP_WORKER_SPEED_MODEL_H_
