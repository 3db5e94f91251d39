#include "sync_policies/lbbsp/quota_split.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace lockstep {
namespace {

struct Share {
  uint32_t worker = 0;
  double weight = 1;
  uint64_t min = 1;
  uint64_t max = QuotaBounds::kNoCap;
  double exact = 0;    // the real-valued share
  uint64_t quota = 0;  // the integer share
};

std::vector<Share> MakeShares(const std::map<uint32_t, double>& weights,
                              const std::map<uint32_t, QuotaBounds>& bounds) {
  double valid_sum = 0;
  size_t valid = 0;
  for (const auto& [w, weight] : weights) {
    if (std::isfinite(weight) && weight > 0) {
      valid_sum += weight;
      ++valid;
    }
  }
  const double fallback = valid > 0 ? valid_sum / valid : 1.0;
  std::vector<Share> shares;
  for (const auto& [w, weight] : weights) {
    Share s;
    s.worker = w;
    s.weight = std::isfinite(weight) && weight > 0 ? weight : fallback;
    auto b = bounds.find(w);
    const QuotaBounds qb = b != bounds.end() ? b->second : QuotaBounds{};
    s.max = qb.max;
    s.min = std::min(qb.min, qb.max);
    shares.push_back(s);
  }
  return shares;
}

double ClampedSum(const std::vector<Share>& shares, double lambda) {
  double sum = 0;
  for (const Share& s : shares) {
    sum += std::clamp(lambda * s.weight, static_cast<double>(s.min),
                      static_cast<double>(s.max));
  }
  return sum;
}

// Sets `exact` to clamp(lambda * weight) with the sum equal to `total`.
// REQUIRES: sum of minimums < total < sum of maximums.
void WaterFill(std::vector<Share>* shares, uint64_t total) {
  const double target = static_cast<double>(total);
  double lo = 0;
  double hi = 1;
  while (ClampedSum(*shares, hi) < target) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (ClampedSum(*shares, mid) < target ? lo : hi) = mid;
  }
  for (Share& s : *shares) {
    s.exact = std::clamp(hi * s.weight, static_cast<double>(s.min),
                         static_cast<double>(s.max));
  }
}

// Floors the exact shares and hands out the remaining units by largest
// fractional part, within the bounds.
void RoundLargestRemainder(std::vector<Share>* shares, uint64_t total) {
  int64_t left = static_cast<int64_t>(total);
  for (Share& s : *shares) {
    s.quota =
        std::clamp(static_cast<uint64_t>(std::floor(s.exact)), s.min, s.max);
    left -= static_cast<int64_t>(s.quota);
  }
  std::vector<Share*> order;
  for (Share& s : *shares) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](Share* a, Share* b) {
    return a->exact - std::floor(a->exact) > b->exact - std::floor(b->exact);
  });
  // Rounding error can leave a unit or two either way; cycle until placed.
  for (bool moved = true; left != 0 && moved;) {
    moved = false;
    for (Share* s : order) {
      if (left > 0 && s->quota < s->max) {
        ++s->quota;
        --left;
        moved = true;
      } else if (left < 0 && s->quota > s->min) {
        --s->quota;
        ++left;
        moved = true;
      }
      if (left == 0) break;
    }
  }
}

}  // namespace

QuotaSplit SplitProportionally(const std::map<uint32_t, double>& weights,
                               const std::map<uint32_t, QuotaBounds>& bounds,
                               uint64_t total) {
  std::vector<Share> shares = MakeShares(weights, bounds);
  uint64_t min_sum = 0;
  uint64_t max_sum = 0;
  for (const Share& s : shares) {
    min_sum += s.min;
    max_sum += s.max;
  }
  QuotaSplit split;
  if (total <= min_sum || total >= max_sum) {
    const bool at_min = total <= min_sum;
    for (Share& s : shares) s.quota = at_min ? s.min : s.max;
    split.feasible = at_min ? total == min_sum : total == max_sum;
  } else {
    WaterFill(&shares, total);
    RoundLargestRemainder(&shares, total);
  }
  for (const Share& s : shares) {
    split.quotas[s.worker] = static_cast<uint32_t>(s.quota);
    split.sum += s.quota;
  }
  if (shares.empty()) split.feasible = total == 0;
  return split;
}

}  // namespace lockstep
