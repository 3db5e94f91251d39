#include "sync_policies/lbbsp/numerical_batch_search.h"

#include <algorithm>
#include <numeric>

namespace lockstep {

NumericalBatchSearch::NumericalBatchSearch(uint64_t global_batch,
                                           Options options)
    : global_batch_(global_batch), options_(options) {
  Reset(1);
}

void NumericalBatchSearch::Reset(size_t workers) {
  workers_ = std::max<size_t>(workers, 1);
  const uint64_t n = workers_;
  fast_step_ = static_cast<uint32_t>(std::max<uint64_t>(
      1, std::min<uint64_t>(global_batch_ / (2 * n), UINT32_MAX)));
  phase_ = Phase::kFastApproach;
  step_ = fast_step_;
  window_ = std::max<uint32_t>(options_.initial_window, 1);
  samples_.clear();
  last_move_.reset();
  settled_gap_ = 0;
  references_.clear();
}

bool NumericalBatchSearch::OnClock(
    const std::map<uint32_t, double>& compute_s,
    std::map<uint32_t, uint32_t>* quotas,
    const std::map<uint32_t, QuotaBounds>& bounds) {
  for (const auto& [w, seconds] : compute_s) {
    if (quotas->count(w) != 0) samples_[w].push_back(seconds);
  }
  const auto means = WindowMeans(*quotas);
  if (!means.has_value() || means->size() < 2) return false;
  samples_.clear();  // the next window starts now, moved or not
  const std::optional<Move> move = PickMove(*means, *quotas, bounds);
  if (!move.has_value()) {  // nobody can take more: nothing to do
    phase_ = Phase::kBalanced;
    last_gap_ = 0;
    return false;
  }
  const bool load_changed =
      phase_ != Phase::kFastApproach && LoadChanged(*means, *quotas);
  // Fine-tune moves a sample per doubled window: far too slow to follow a
  // new load, so a worker whose time changed at an unchanged quota sends
  // the search back to the fast approach.
  if (load_changed) Reset(workers_);
  UpdateReferences(*means, *quotas);
  const double slowest = means->at(move->from);
  last_gap_ = slowest > 0 ? (slowest - means->at(move->to)) / slowest : 0;
  if (!UpdatePhase(last_gap_)) return false;
  return MoveStep(*move, quotas, bounds);
}

std::optional<NumericalBatchSearch::Move> NumericalBatchSearch::PickMove(
    const std::map<uint32_t, double>& means,
    const std::map<uint32_t, uint32_t>& quotas,
    const std::map<uint32_t, QuotaBounds>& bounds) {
  // Straggler: the slowest (ties: the higher rank). Leader: the fastest
  // with headroom (ties: the lower rank).
  uint32_t straggler = means.begin()->first;
  for (const auto& [w, mean] : means) {
    if (mean >= means.at(straggler)) straggler = w;
  }
  std::optional<uint32_t> leader;
  for (const auto& [w, mean] : means) {
    if (w == straggler || quotas.at(w) >= BoundsOf(bounds, w).max) continue;
    if (!leader.has_value() || mean < means.at(*leader)) leader = w;
  }
  if (!leader.has_value()) return std::nullopt;
  return Move{straggler, *leader};
}

std::optional<std::map<uint32_t, double>> NumericalBatchSearch::WindowMeans(
    const std::map<uint32_t, uint32_t>& quotas) const {
  std::map<uint32_t, double> means;
  for (const auto& [w, quota] : quotas) {
    auto it = samples_.find(w);
    if (it == samples_.end() || it->second.size() < window_) {
      return std::nullopt;
    }
    const auto& s = it->second;
    means[w] = std::accumulate(s.end() - window_, s.end(), 0.0) / window_;
  }
  return means;
}

void NumericalBatchSearch::UpdateReferences(
    const std::map<uint32_t, double>& means,
    const std::map<uint32_t, uint32_t>& quotas) {
  for (const auto& [w, mean] : means) {
    auto ref = references_.find(w);
    const double quota = quotas.at(w);
    if (ref == references_.end() || !QuotaNear(quota, ref->second.first)) {
      references_[w] = {quotas.at(w), mean};
    }
  }
}

bool NumericalBatchSearch::QuotaNear(double quota, double reference) {
  return std::abs(quota - reference) <= std::max(1.0, 0.1 * reference);
}

bool NumericalBatchSearch::LoadChanged(
    const std::map<uint32_t, double>& means,
    const std::map<uint32_t, uint32_t>& quotas) const {
  for (const auto& [w, mean] : means) {
    auto ref = references_.find(w);
    if (ref == references_.end() || !(ref->second.second > 0) ||
        !QuotaNear(quotas.at(w), ref->second.first)) {
      continue;  // no reference at this quota: its time follows its quota
    }
    if (std::abs(mean - ref->second.second) / ref->second.second >
        options_.restart_gap) {
      return true;
    }
  }
  return false;
}

bool NumericalBatchSearch::UpdatePhase(double gap) {
  if (phase_ == Phase::kBalanced && gap < settled_gap_ + options_.tolerance) {
    return false;
  }
  if (gap < options_.tolerance) {
    phase_ = Phase::kBalanced;
    settled_gap_ = 0;
    return false;
  }
  if (phase_ == Phase::kBalanced) {
    if (gap > options_.restart_gap) {
      Reset(workers_);
    } else {
      phase_ = Phase::kFineTune;
      last_move_.reset();  // a new imbalance, not an oscillation
    }
  }
  return true;
}

bool NumericalBatchSearch::MoveStep(
    const Move& move, std::map<uint32_t, uint32_t>* quotas,
    const std::map<uint32_t, QuotaBounds>& bounds) {
  if (last_move_.has_value() && last_move_->to == move.from) {
    if (step_ == 1) {
      // Oscillating by single samples: as balanced as integers allow.
      phase_ = Phase::kBalanced;
      settled_gap_ = last_gap_;
      return false;
    }
    phase_ = Phase::kFineTune;
    step_ = std::max<uint32_t>(1, step_ / 2);
    window_ = std::min(window_ * 2, std::max(options_.max_window, 1u));
  }
  uint32_t& from = (*quotas)[move.from];
  uint32_t& to = (*quotas)[move.to];
  const uint32_t floor = std::min(BoundsOf(bounds, move.from).min, from);
  const uint32_t delta =
      std::min({step_, from - floor, BoundsOf(bounds, move.to).max - to});
  if (delta == 0) return false;
  from -= delta;
  to += delta;
  last_move_ = move;
  ++moves_;
  return true;
}

QuotaBounds NumericalBatchSearch::BoundsOf(
    const std::map<uint32_t, QuotaBounds>& bounds, uint32_t worker) {
  auto it = bounds.find(worker);
  return it != bounds.end() ? it->second : QuotaBounds{};
}

void NumericalBatchSearch::SaveState(PolicyState* state) const {
  StateWriter out(&(*state)["search"]);
  out.Put(static_cast<double>(workers_));
  out.Put(fast_step_);
  out.Put(static_cast<double>(phase_));
  out.Put(step_);
  out.Put(window_);
  out.Put(last_move_.has_value() ? 1 : 0);
  out.Put(last_move_.has_value() ? last_move_->from : 0);
  out.Put(last_move_.has_value() ? last_move_->to : 0);
  out.Put(static_cast<double>(moves_));
  out.Put(last_gap_);
  out.Put(settled_gap_);
  for (const auto& [w, samples] : samples_) {
    (*state)[WorkerKey("search_samples", w)] = samples;
  }
  for (const auto& [w, last] : references_) {
    (*state)[WorkerKey("search_reference", w)] = {
        static_cast<double>(last.first), last.second};
  }
}

Status NumericalBatchSearch::LoadState(const PolicyState& state) {
  LS_ASSIGN_OR_RETURN(StateReader in, StateReader::Of(state, "search"));
  constexpr int64_t kMax32 = UINT32_MAX;
  LS_ASSIGN_OR_RETURN(const int64_t workers, in.GetInt(1, kMax32));
  LS_ASSIGN_OR_RETURN(const int64_t fast_step, in.GetInt(1, kMax32));
  LS_ASSIGN_OR_RETURN(const int64_t phase,
                      in.GetInt(0, static_cast<int64_t>(Phase::kBalanced)));
  LS_ASSIGN_OR_RETURN(const int64_t step, in.GetInt(0, kMax32));
  LS_ASSIGN_OR_RETURN(const int64_t window, in.GetInt(1, kMax32));
  LS_ASSIGN_OR_RETURN(const int64_t has_move, in.GetInt(0, 1));
  LS_ASSIGN_OR_RETURN(const int64_t from, in.GetInt(0, kMax32));
  LS_ASSIGN_OR_RETURN(const int64_t to, in.GetInt(0, kMax32));
  LS_ASSIGN_OR_RETURN(const int64_t moves, in.GetInt(0, kMaxStateCount));
  LS_ASSIGN_OR_RETURN(const double last_gap, in.Get());
  LS_ASSIGN_OR_RETURN(const double settled_gap, in.Get());
  LS_RETURN_IF_ERROR(in.Finish());
  // Everything is read: only now does the search change.
  last_gap_ = last_gap;
  settled_gap_ = settled_gap;
  workers_ = static_cast<size_t>(workers);
  fast_step_ = static_cast<uint32_t>(fast_step);
  phase_ = static_cast<Phase>(phase);
  step_ = static_cast<uint32_t>(step);
  window_ = static_cast<uint32_t>(window);
  last_move_.reset();
  if (has_move == 1) {
    last_move_ = Move{static_cast<uint32_t>(from), static_cast<uint32_t>(to)};
  }
  moves_ = static_cast<uint64_t>(moves);
  samples_.clear();
  for (uint32_t w : WorkersWithKey(state, "search_samples")) {
    samples_[w] = state.at(WorkerKey("search_samples", w));
  }
  references_.clear();
  for (uint32_t w : WorkersWithKey(state, "search_reference")) {
    const std::vector<double>& v = state.at(WorkerKey("search_reference", w));
    if (v.size() != 2 || !(v[0] >= 0) || v[0] > kMax32) {
      return InvalidArgument("search_reference of worker " + std::to_string(w) +
                             " is not [quota, mean time]");
    }
    references_[w] = {static_cast<uint32_t>(v[0]), v[1]};
  }
  return Status::Ok();
}

}  // namespace lockstep
