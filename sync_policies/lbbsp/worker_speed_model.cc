#include "sync_policies/lbbsp/worker_speed_model.h"

#include <utility>

namespace lockstep {

WorkerSpeedModel::WorkerSpeedModel(std::unique_ptr<SpeedPredictor> predictor)
    : predictor_(std::move(predictor)) {}

void WorkerSpeedModel::Observe(const ClockReport& report) {
  cpu_available_ = report.cpu_available;
  mem_available_ = report.mem_available;
  if (report.batch == 0 || !(report.compute_s > 0)) return;
  const double speed = report.batch / report.compute_s;
  if (predicted_.has_value()) rmse_.Add(*predicted_, speed);
  predicted_.reset();
  predictor_->Observe(speed, report.cpu_available, report.mem_available);
}

double WorkerSpeedModel::PredictFor(int64_t clock) {
  if (predictor_->observations() == 0) return 0;
  const double speed = predictor_->Predict(cpu_available_, mem_available_);
  predicted_ = speed;
  predicted_clock_ = clock;
  return speed;
}

std::optional<double> WorkerSpeedModel::PredictedFor(int64_t clock) const {
  if (predicted_clock_ != clock) return std::nullopt;
  return predicted_;
}

std::optional<double> WorkerSpeedModel::Rmse() const {
  if (rmse_.count() == 0) return std::nullopt;
  return rmse_.rmse();
}

void WorkerSpeedModel::Save(StateWriter* out) const {
  out->Put(cpu_available_);
  out->Put(mem_available_);
  out->Put(predicted_.has_value() ? 1 : 0);
  out->Put(predicted_.value_or(0));
  out->Put(rmse_.sum_sq());
  out->Put(static_cast<double>(rmse_.count()));
  predictor_->SaveState(out);
}

Status WorkerSpeedModel::Load(StateReader* in, int64_t clock) {
  LS_ASSIGN_OR_RETURN(cpu_available_, in->Get());
  LS_ASSIGN_OR_RETURN(mem_available_, in->Get());
  LS_ASSIGN_OR_RETURN(const int64_t has_predicted, in->GetInt(0, 1));
  LS_ASSIGN_OR_RETURN(const double predicted, in->Get());
  if (has_predicted == 1) {
    predicted_ = predicted;
    predicted_clock_ = clock;
  }
  LS_ASSIGN_OR_RETURN(const double sum_sq, in->Get());
  LS_ASSIGN_OR_RETURN(const uint64_t count, in->GetCount());
  rmse_.Restore(sum_sq, count);
  return predictor_->LoadState(in);
}

}  // namespace lockstep
