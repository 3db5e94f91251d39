#include "sync_policies/lbbsp/lbbsp_policy.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <set>
#include <utility>

namespace lockstep {
namespace {

// The policy state's keys: a worker's quota and its speed model.
constexpr char kQuota[] = "quota";
constexpr char kModel[] = "model";

std::string WorkerLabel(const char* name, uint32_t worker) {
  return std::string(name) + "{worker=\"" + std::to_string(worker) + "\"}";
}

// Parses the method part at params[*i], if any; advances *i past it.
Status ParseMethod(const PolicySpec& spec, size_t* i, LbBspOptions* options) {
  const auto& params = spec.params();
  if (*i < params.size() && params[*i] == "numerical") {
    options->method = LbBspOptions::Method::kNumerical;
    ++*i;
  } else if (*i < params.size() && params[*i] == "analytical") {
    ++*i;
    if (*i >= params.size() || params[*i].find('=') != std::string::npos) {
      return Status::Ok();  // the default predictor
    }
    const PredictorFactory* f = PredictorRegistry().Find(params[*i]);
    if (f == nullptr) {
      return spec.Error(PredictorRegistry().Unknown(params[*i]).message());
    }
    options->predictor = f->kind;
    ++*i;
  }
  return Status::Ok();
}

// Parses the ":min=N" and ":max=N" bounds from params[i] on.
Status ParseBounds(const PolicySpec& spec, size_t i, LbBspOptions* options) {
  std::set<std::string> seen;
  for (; i < spec.params().size(); ++i) {
    const std::string& param = spec.params()[i];
    const std::string key = param.substr(0, param.find('='));
    if ((key != "min" && key != "max") || !PolicySpec::HasKey(param, key)) {
      return spec.Error("unexpected '" + param + "'");
    }
    if (!seen.insert(key).second)
      return spec.Error("'" + key + "' given twice");
    LS_ASSIGN_OR_RETURN(uint64_t n, spec.KeyNumber(param, key));
    if (n == 0) return spec.Error("'" + param + "': must be >= 1");
    (key == "min" ? options->min_batch : options->max_batch) =
        static_cast<uint32_t>(n);
  }
  if (options->max_batch != 0 && options->min_batch > options->max_batch) {
    return spec.Error("min=" + std::to_string(options->min_batch) +
                      " is above max=" + std::to_string(options->max_batch));
  }
  return Status::Ok();
}

}  // namespace

LbBspPolicy::LbBspPolicy(uint64_t global_batch, LbBspOptions options)
    : BspPolicy({}),
      global_batch_(global_batch),
      options_(options),
      search_(global_batch, options.search) {
  assert(options.max_batch == 0 || options.min_batch <= options.max_batch);
}

std::string LbBspPolicy::name() const {
  std::string name = "lbbsp:";
  if (options_.method == LbBspOptions::Method::kNumerical) {
    name += "numerical";
  } else {
    name += "analytical:" + PredictorKindName(options_.predictor);
  }
  if (options_.min_batch != 1) {
    name += ":min=" + std::to_string(options_.min_batch);
  }
  if (options_.max_batch != 0) {
    name += ":max=" + std::to_string(options_.max_batch);
  }
  return name;
}

QuotaBounds LbBspPolicy::SpecBounds() const {
  QuotaBounds b;
  b.min = options_.min_batch;
  if (options_.max_batch != 0) b.max = options_.max_batch;
  return b;
}

QuotaBounds LbBspPolicy::bounds(uint32_t worker) const {
  auto it = bounds_.find(worker);
  return it != bounds_.end() ? it->second : SpecBounds();
}

std::optional<double> LbBspPolicy::PredictorRmse(uint32_t worker) const {
  auto it = models_.find(worker);
  if (it == models_.end()) return std::nullopt;
  return it->second.Rmse();
}

std::optional<double> LbBspPolicy::PredictedSpeed(uint32_t worker,
                                                  int64_t clock) const {
  auto it = models_.find(worker);
  if (it == models_.end()) return std::nullopt;
  return it->second.PredictedFor(clock);
}

uint32_t LbBspPolicy::QuotaOf(uint32_t worker, int64_t /*clock*/) const {
  auto it = quotas_.find(worker);
  return it != quotas_.end() ? it->second : 0;
}

std::vector<uint32_t> LbBspPolicy::WorkersOfCurrentClock() const {
  std::vector<uint32_t> out;
  for (const auto& [w, joined] : live()) {
    if (joined <= CurrentClock()) out.push_back(w);
  }
  return out;
}

std::unique_ptr<SpeedPredictor> LbBspPolicy::NewPredictor(
    uint32_t worker) const {
  return MakeSpeedPredictor(options_.predictor,
                            options_.seed * 1000003 + worker);
}

void LbBspPolicy::OnWorkerJoined(uint32_t worker, int64_t clock,
                                 const WorkerCaps& caps) {
  QuotaBounds b = SpecBounds();
  b.min = std::max(b.min, caps.min_batch);
  if (caps.max_batch != 0) b.max = std::min(b.max, caps.max_batch);
  bounds_[worker] = b;
  if (live().count(worker) != 0) return;  // already in; keep its quota
  models_.insert_or_assign(worker, TakeModel(worker));
  // Quotas of a clock under way are fixed: join at the next one.
  const bool under_way = !admitted_.empty();
  const int64_t at = under_way ? CurrentClock() + 1 : CurrentClock();
  BspPolicy::OnWorkerJoined(worker, std::max(clock, at), caps);
  membership_changed_ = true;
  if (!under_way) Resplit();
}

std::vector<CommitDecision> LbBspPolicy::OnWorkerLeft(uint32_t worker) {
  quotas_.erase(worker);
  models_.erase(worker);
  bounds_.erase(worker);
  for (auto& [clock, reports] : reports_) reports.erase(worker);
  admitted_.erase(worker);
  membership_changed_ = true;
  std::vector<CommitDecision> commits = BspPolicy::OnWorkerLeft(worker);
  // No live worker runs the current clock: its quotas may still change.
  if (admitted_.empty() && membership_changed_) Resplit();
  return commits;
}

std::optional<AdmissionDecision> LbBspPolicy::Admit(uint32_t worker,
                                                    int64_t clock) {
  auto it = live().find(worker);
  if (it == live().end() || it->second > CurrentClock()) return std::nullopt;
  std::optional<AdmissionDecision> decision = BspPolicy::Admit(worker, clock);
  if (decision.has_value()) {
    admitted_.insert(worker);
    saved_.reset();  // the clock is under way with the quotas it has
  }
  return decision;
}

std::vector<CommitDecision> LbBspPolicy::OnClockDone(
    const ClockReport& report) {
  if (live().count(report.worker) != 0 && report.clock > committed_clock()) {
    reports_[report.clock][report.worker] = report;
  }
  return BspPolicy::OnClockDone(report);
}

void LbBspPolicy::OnCommitted(int64_t clock) {
  admitted_.clear();
  std::map<uint32_t, ClockReport> reports = std::move(reports_[clock]);
  reports_.erase(reports_.begin(), reports_.upper_bound(clock));
  if (options_.method == LbBspOptions::Method::kAnalytical) {
    ObserveSpeeds(reports);
    Resplit();
    return;
  }
  if (membership_changed_) {
    Resplit();
    return;
  }
  // A worker's whole time in the clock but its wait for admission: a slower
  // link (push and pull) makes a straggler as much as slower compute does.
  std::map<uint32_t, double> busy_s;
  for (const auto& [w, report] : reports) {
    busy_s[w] = report.compute_s + report.push_s + report.pull_s;
  }
  search_.OnClock(busy_s, &quotas_, bounds_);
}

void LbBspPolicy::ObserveSpeeds(
    const std::map<uint32_t, ClockReport>& reports) {
  for (const auto& [w, report] : reports) {
    auto it = models_.find(w);
    if (it != models_.end()) it->second.Observe(report);
  }
}

std::map<uint32_t, double> LbBspPolicy::AnalyticalWeights() {
  std::map<uint32_t, double> weights;
  for (uint32_t w : WorkersOfCurrentClock()) {
    // 0 = unknown: SplitProportionally uses the mean.
    auto it = models_.find(w);
    weights[w] =
        it != models_.end() ? it->second.PredictFor(CurrentClock()) : 0;
  }
  return weights;
}

std::map<uint32_t, double> LbBspPolicy::NumericalWeights() const {
  std::map<uint32_t, double> weights;
  for (uint32_t w : WorkersOfCurrentClock()) {
    weights[w] = static_cast<double>(QuotaOf(w, CurrentClock()));
  }
  return weights;
}

void LbBspPolicy::Resplit() {
  if (UseSavedQuotas()) return;
  const bool numerical = options_.method == LbBspOptions::Method::kNumerical;
  const std::map<uint32_t, double> weights =
      numerical ? NumericalWeights() : AnalyticalWeights();
  QuotaSplit split = SplitProportionally(weights, bounds_, global_batch_);
  quotas_ = std::move(split.quotas);
  feasible_ = split.feasible || weights.empty();
  membership_changed_ = false;
  ++resplits_;
  if (numerical) search_.Reset(quotas_.size());
}

std::map<std::string, double> LbBspPolicy::Metrics() const {
  std::map<std::string, double> m = BspPolicy::Metrics();
  uint64_t sum = 0;
  for (const auto& [w, quota] : quotas_) sum += quota;
  m["lockstep_global_batch"] = static_cast<double>(global_batch_);
  m["lockstep_quota_samples"] = static_cast<double>(sum);
  m["lockstep_quota_infeasible"] = feasible_ ? 0 : 1;
  m["lockstep_lbbsp_resplits_total"] = static_cast<double>(resplits_);
  if (options_.method == LbBspOptions::Method::kNumerical) {
    m["lockstep_lbbsp_phase"] = static_cast<double>(search_.phase());
    m["lockstep_lbbsp_step"] = search_.step();
    m["lockstep_lbbsp_window"] = search_.window();
    m["lockstep_lbbsp_moves_total"] = static_cast<double>(search_.moves());
    return m;
  }
  for (const auto& [w, model] : models_) {
    if (auto rmse = model.Rmse()) {
      m[WorkerLabel("lockstep_predictor_rmse", w)] = *rmse;
    }
    if (auto predicted = model.predicted()) {
      m[WorkerLabel("lockstep_predicted_speed", w)] = *predicted;
    }
  }
  return m;
}

StatusOr<std::unique_ptr<SyncPolicy>> LbBspPolicy::Create(
    const PolicySpec& spec, const PolicyJob& job) {
  LbBspOptions options;
  size_t i = 0;
  LS_RETURN_IF_ERROR(ParseMethod(spec, &i, &options));
  LS_RETURN_IF_ERROR(ParseBounds(spec, i, &options));
  options.seed = job.seed;
  return std::unique_ptr<SyncPolicy>(
      new LbBspPolicy(job.global_batch, options));
}

// Saving the state into a snapshot round and continuing from it.

PolicyState LbBspPolicy::SaveState() const {
  PolicyState state;
  state["lbbsp"] = {feasible_ ? 1.0 : 0.0, static_cast<double>(resplits_)};
  for (const auto& [w, quota] : quotas_) {
    state[WorkerKey(kQuota, w)] = {static_cast<double>(quota)};
  }
  for (const auto& [w, model] : models_) {
    StateWriter out(&state[WorkerKey(kModel, w)]);
    model.Save(&out);
  }
  if (options_.method == LbBspOptions::Method::kNumerical) {
    search_.SaveState(&state);
  }
  return state;
}

StatusOr<WorkerSpeedModel> LbBspPolicy::LoadModel(const PolicyState& state,
                                                  uint32_t worker) const {
  LS_ASSIGN_OR_RETURN(StateReader in,
                      StateReader::Of(state, WorkerKey(kModel, worker)));
  // Saved after a commit: a prediction is for the clock a resumed job
  // starts at.
  WorkerSpeedModel model(NewPredictor(worker));
  LS_RETURN_IF_ERROR(model.Load(&in, CurrentClock()));
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
    LS_ASSIGN_OR_RETURN(WorkerSpeedModel model, LoadModel(state, w));
    saved.models.insert_or_assign(w, std::move(model));
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

WorkerSpeedModel LbBspPolicy::TakeModel(uint32_t worker) {
  if (saved_.has_value()) {
    auto it = saved_->models.find(worker);
    if (it != saved_->models.end()) {
      WorkerSpeedModel model = std::move(it->second);
      saved_->models.erase(it);
      return model;
    }
  }
  return WorkerSpeedModel(NewPredictor(worker));
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
