// Splitting LB-BSP's global batch X into integer per-worker quotas.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_SYNC_POLICIES_LBBSP_QUOTA_SPLIT_H_
#define LOCKSTEP_SYNC_POLICIES_LBBSP_QUOTA_SPLIT_H_

#include <cstdint>
#include <limits>
#include <map>

namespace lockstep {

// Inclusive per-worker quota bounds, in samples.
struct QuotaBounds {
  static constexpr uint32_t kNoCap = std::numeric_limits<uint32_t>::max();
  uint32_t min = 1;
  uint32_t max = kNoCap;
};

struct QuotaSplit {
  std::map<uint32_t, uint32_t> quotas;
  // Sum of `quotas`; equals the requested total unless the bounds made
  // that impossible.
  uint64_t sum = 0;
  bool feasible = true;
};

// Splits `total` over the workers of `weights` (worker -> weight) in
// proportion to their weights, as integers within `bounds` (a worker
// without an entry gets the default QuotaBounds): x_w = clamp(lambda *
// weight_w, min_w, max_w) with lambda chosen so that the sum is `total`,
// then rounded by largest remainder (ties to the lower rank). A weight
// that is not a finite positive number counts as the mean of the valid
// ones (1 if none is valid). When the bounds cannot meet `total` (sum of
// minimums above it, or of maximums below it) every worker gets its
// minimum (resp. maximum) and `feasible` is false. A bound pair with
// min > max is read as max (the cap wins).
QuotaSplit SplitProportionally(const std::map<uint32_t, double>& weights,
                               const std::map<uint32_t, QuotaBounds>& bounds,
                               uint64_t total);

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_LBBSP_QUOTA_SPLIT_H_
