#include "tools/experiment/cost_model.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace lockstep {
namespace {

std::string Trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(' ') - begin + 1);
}

}  // namespace

std::vector<uint32_t> CostModel::EvenSplit(uint64_t x, uint32_t workers) {
  std::vector<uint32_t> batches(workers, static_cast<uint32_t>(x / workers));
  for (uint64_t i = 0; i < x % workers; ++i) ++batches[i];
  return batches;
}

std::string CostModel::ComputeItems(const std::string& items) {
  std::string kept;
  size_t start = 0;
  while (start <= items.size()) {
    size_t end = items.find(',', start);
    if (end == std::string::npos) end = items.size();
    const std::string item = Trimmed(items.substr(start, end - start));
    const bool compute = item.rfind("linear=", 0) == 0 ||
                         item.rfind("gpu=", 0) == 0 ||
                         (!item.empty() && item[0] == 'x');
    if (compute) kept += (kept.empty() ? "" : ",") + item;
    start = end + 1;
  }
  return kept;
}

StatusOr<CostModel> CostModel::Create(const HeteroProfiles& profiles,
                                      uint32_t workers) {
  std::vector<HeteroProfile> models(workers);
  for (const auto& [rank, items] : profiles) {
    if (rank >= workers) {
      return InvalidArgument("a profile for worker " + std::to_string(rank) +
                             " of " + std::to_string(workers));
    }
    LS_ASSIGN_OR_RETURN(models[rank],
                        HeteroProfile::Parse(ComputeItems(items), 0));
  }
  return CostModel(std::move(models));
}

bool CostModel::complete() const {
  return std::all_of(models_.begin(), models_.end(),
                     [](const HeteroProfile& p) { return p.has_cost_model(); });
}

bool CostModel::none() const {
  return std::none_of(
      models_.begin(), models_.end(),
      [](const HeteroProfile& p) { return p.has_cost_model(); });
}

double CostModel::Seconds(uint32_t w, int64_t clock, double batch) const {
  const HeteroProfile& p = models_.at(w);
  const double whole = std::floor(batch);
  const double low = p.TargetSeconds(clock, static_cast<uint32_t>(whole));
  if (batch == whole) return low;
  const double high = p.TargetSeconds(clock, static_cast<uint32_t>(whole + 1));
  return low + (high - low) * (batch - whole);
}

double CostModel::ClockSeconds(int64_t clock,
                               const std::vector<uint32_t>& batches) const {
  double slowest = 0;
  for (uint32_t w = 0; w < workers(); ++w) {
    const uint32_t batch = batches.size() == 1 ? batches[0] : batches.at(w);
    slowest = std::max(slowest, Seconds(w, clock, batch));
  }
  return slowest;
}

double CostModel::Cap(uint32_t w, double limit) const {
  const uint32_t cap = models_[w].max_batch();
  return cap > 0 ? std::min<double>(cap, limit) : limit;
}

uint64_t WholeSamplesWithin(const HeteroProfile& profile, int64_t clock,
                            double seconds, uint64_t limit) {
  uint64_t lo = 0, hi = limit;
  while (lo < hi) {
    const uint64_t mid = (lo + hi + 1) / 2;
    if (profile.TargetSeconds(clock, static_cast<uint32_t>(mid)) <= seconds) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

double CostModel::SamplesWithin(uint32_t w, int64_t clock, double seconds,
                                double limit) const {
  const HeteroProfile& p = models_[w];
  const uint64_t cap = static_cast<uint64_t>(Cap(w, limit));
  if (p.TargetSeconds(clock, 0) > seconds) return 0;
  const uint64_t lo = WholeSamplesWithin(p, clock, seconds, cap);
  if (lo >= cap) return static_cast<double>(cap);
  const double at = p.TargetSeconds(clock, static_cast<uint32_t>(lo));
  const double next = p.TargetSeconds(clock, static_cast<uint32_t>(lo + 1));
  return static_cast<double>(lo) +
         (next > at ? (seconds - at) / (next - at) : 0);
}

double CostModel::BalancedClockSeconds(int64_t clock,
                                       double global_batch) const {
  double lo = 0, hi = 0;
  for (uint32_t w = 0; w < workers(); ++w) {
    hi = std::max(hi, Seconds(w, clock, Cap(w, global_batch)));
  }
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    double samples = 0;
    for (uint32_t w = 0; w < workers(); ++w) {
      samples += SamplesWithin(w, clock, mid, global_batch);
    }
    (samples >= global_batch ? hi : lo) = mid;
  }
  return hi;
}

std::vector<uint32_t> CostModel::BalancedSplit(int64_t clock,
                                               uint64_t global_batch) const {
  std::vector<uint32_t> batches(workers(), 1);
  // The next sample goes to whoever would finish it soonest.
  using Next = std::pair<double, uint32_t>;  // its time then, the rank
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> next;
  for (uint32_t w = 0; w < workers(); ++w) {
    if (Cap(w, global_batch) > 1) next.push({Seconds(w, clock, 2), w});
  }
  for (uint64_t left = global_batch - workers(); left > 0 && !next.empty();
       --left) {
    const uint32_t w = next.top().second;
    next.pop();
    ++batches[w];
    if (batches[w] < Cap(w, global_batch)) {
      next.push({Seconds(w, clock, batches[w] + 1), w});
    }
  }
  return batches;
}

double CostModel::SplitSpeedupBound(
    int64_t clocks, const std::vector<uint32_t>& batches) const {
  double global_batch = 0;
  for (uint32_t w = 0; w < workers(); ++w) {
    global_batch += batches.size() == 1 ? batches[0] : batches.at(w);
  }
  double fixed = 0, balanced = 0;
  for (int64_t c = 0; c < std::max<int64_t>(1, clocks); ++c) {
    fixed += ClockSeconds(c, batches);
    balanced += BalancedClockSeconds(c, global_batch);
  }
  return balanced > 0 ? fixed / balanced : NAN;
}

}  // namespace lockstep
