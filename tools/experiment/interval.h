// Medians over seeds with 95% confidence intervals: a bootstrap percentile
// interval of the median (the seeds resampled with replacement), and for a
// speedup the ratio of two policies' medians with a paired bootstrap
// interval (the seeds resampled together, since a seed gives every policy
// the same initial model and sample order). A run that never reached a
// target counts as +infinity ("never"): a median is finite when more than
// half the seeds reached it. Resampling uses a fixed seed, so a report is
// reproducible from its runs.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_INTERVAL_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_INTERVAL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {

inline constexpr int kBootstrapResamples = 10000;
inline constexpr uint64_t kBootstrapSeed = 20240601;
// How the report names the interval.
inline constexpr char kIntervalMethod[] =
    "95% bootstrap percentile interval of the median (10,000 resamples of "
    "the seeds)";
inline constexpr char kRatioMethod[] =
    "ratio of the medians (baseline over policy), 95% paired bootstrap "
    "percentile interval (10,000 resamples of the seeds)";

// A median and its 95% interval; NaN when there were no values.
struct Interval {
  int n = 0;  // values (seeds) it is over
  double median = 0, lo = 0, hi = 0;
  bool empty() const { return n == 0; }
  // "11.0 [10.0, 12.0]"; `infinite` for +inf; "11.0" when lo == hi;
  // "-" when empty. `unit` follows each number: "1.52x [1.40x, 1.61x]".
  std::string Text(int digits, const std::string& unit = "",
                   const std::string& infinite = "never") const;
};

// The median (of +inf values too) of `values`; NaN when empty.
double MedianOf(std::vector<double> values);

// The median of `values` (NaN values left out) and its interval.
Interval MedianInterval(const std::vector<double>& values);

// `pairs` are (baseline, policy) values of the same seed; the ratio of
// their medians, baseline over policy (a policy that never reached: 0;
// a baseline that never did: +inf), and its paired interval. Pairs with a
// NaN are left out; resamples where neither median is finite are too.
Interval RatioInterval(const std::vector<std::pair<double, double>>& pairs);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_INTERVAL_H_
