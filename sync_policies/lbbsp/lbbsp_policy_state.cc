// LbBspPolicy: saving its state into a snapshot round and continuing from
// it.
#include "sync_policies/lbbsp/lbbsp_policy.h"

namespace lockstep {
namespace {

constexpr char kQuota[] = "quota";
constexpr char kModel[] = "model";

}  // namespace

PolicyState LbBspPolicy::SaveState() const {
  PolicyState state;
  state["lbbsp"] = {feasible_ ? 1.0 : 0.0, static_cast<double>(resplits_)};
  for (const auto& [w, quota] : quotas_) {
    state[WorkerKey(kQuota, w)] = {static_cast<double>(quota)};
  }
  for (const auto& [w, model] : models_) {
    StateWriter out(&state[WorkerKey(kModel, w)]);
    out.Put(model.cpu_available);
    out.Put(model.mem_available);
    out.Put(model.predicted.has_value() ? 1 : 0);
    out.Put(model.predicted.value_or(0));
    out.Put(model.rmse.sum_sq());
    out.Put(static_cast<double>(model.rmse.count()));
    model.predictor->SaveState(&out);
  }
  if (options_.method == LbBspOptions::Method::kNumerical) {
    search_.SaveState(&state);
  }
  return state;
}

StatusOr<LbBspPolicy::WorkerModel> LbBspPolicy::LoadModel(
    const PolicyState& state, uint32_t worker) const {
  LS_ASSIGN_OR_RETURN(StateReader in,
                      StateReader::Of(state, WorkerKey(kModel, worker)));
  WorkerModel model;
  LS_ASSIGN_OR_RETURN(model.cpu_available, in.Get());
  LS_ASSIGN_OR_RETURN(model.mem_available, in.Get());
  LS_ASSIGN_OR_RETURN(const int64_t has_predicted, in.GetInt(0, 1));
  LS_ASSIGN_OR_RETURN(const double predicted, in.Get());
  if (has_predicted == 1) {
    // Saved after a commit: the prediction is for the clock a resumed job
    // starts at.
    model.predicted = predicted;
    model.predicted_clock = CurrentClock();
  }
  LS_ASSIGN_OR_RETURN(const double sum_sq, in.Get());
  LS_ASSIGN_OR_RETURN(const uint64_t count, in.GetCount());
  model.rmse.Restore(sum_sq, count);
  model.predictor = NewPredictor(worker);
  LS_RETURN_IF_ERROR(model.predictor->LoadState(&in));
  LS_RETURN_IF_ERROR(in.Finish());
  return model;
}

Status LbBspPolicy::LoadState(const PolicyState& state) {
  LS_ASSIGN_OR_RETURN(StateReader in, StateReader::Of(state, "lbbsp"));
  Saved saved;
  LS_ASSIGN_OR_RETURN(const int64_t feasible, in.GetInt(0, 1));
  LS_ASSIGN_OR_RETURN(const uint64_t resplits, in.GetCount());
  LS_RETURN_IF_ERROR(in.Finish());
  saved.feasible = feasible == 1;
  for (uint32_t w : WorkersWithKey(state, kQuota)) {
    LS_ASSIGN_OR_RETURN(StateReader quota,
                        StateReader::Of(state, WorkerKey(kQuota, w)));
    LS_ASSIGN_OR_RETURN(const int64_t q, quota.GetInt(0, UINT32_MAX));
    LS_RETURN_IF_ERROR(quota.Finish());
    saved.quotas[w] = static_cast<uint32_t>(q);
  }
  for (uint32_t w : WorkersWithKey(state, kModel)) {
    LS_ASSIGN_OR_RETURN(saved.models[w], LoadModel(state, w));
  }
  if (options_.method == LbBspOptions::Method::kNumerical) {
    // Checked now, taken when the saved quotas are (a membership change
    // before then restarts the search).
    NumericalBatchSearch search(global_batch_, options_.search);
    LS_RETURN_IF_ERROR(search.LoadState(state));
    saved.search = std::move(search);
  }
  resplits_ = resplits;
  saved_ = std::move(saved);
  return Status::Ok();
}

LbBspPolicy::WorkerModel LbBspPolicy::TakeModel(uint32_t worker) {
  if (saved_.has_value()) {
    auto it = saved_->models.find(worker);
    if (it != saved_->models.end()) {
      WorkerModel model = std::move(it->second);
      saved_->models.erase(it);
      return model;
    }
  }
  WorkerModel model;
  model.predictor = NewPredictor(worker);
  return model;
}

bool LbBspPolicy::UseSavedQuotas() {
  if (!saved_.has_value()) return false;
  const std::vector<uint32_t> workers = WorkersOfCurrentClock();
  if (workers.size() != saved_->quotas.size()) return false;
  for (uint32_t w : workers) {
    auto it = saved_->quotas.find(w);
    // A worker may come back with other caps (a smaller GPU).
    if (it == saved_->quotas.end() || it->second < bounds(w).min ||
        it->second > bounds(w).max) {
      return false;
    }
  }
  quotas_ = saved_->quotas;
  feasible_ = saved_->feasible;
  if (saved_->search.has_value()) search_ = *saved_->search;
  membership_changed_ = false;
  return true;
}

}  // namespace lockstep
