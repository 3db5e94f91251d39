// The tables of one scenario: a row per policy with medians over the seeds
// and their min-max, as Markdown and CSV. The speedup pairs runs by seed:
// the baseline's time to target over the policy's, for every seed where
// both reached the target.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_TABLE_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/experiment/run_metrics.h"

namespace lockstep {

// One finished run of a scenario, as the tables need it.
struct RunOutcome {
  std::string policy;
  uint64_t seed = 0;
  std::optional<RunMetrics> metrics;  // unset: failed, timed out, unreadable
};

struct PolicyRow {
  std::string policy;
  int runs = 0;     // finished ok
  int failed = 0;   // failed, timed out or unreadable
  int reached = 0;  // runs that reached the target
  std::optional<Spread> time_to_target_s, speedup, clocks_to_target, wall_s,
      mean_clock_ms, clocks_per_s, samples_per_s, test_accuracy, clocks,
      compute_share, push_share, pull_share, wait_share, idle_mean, idle_max,
      dropped_pushes, staleness_p50, staleness_p99, overhead_share,
      predictor_rmse_share;
  // Each worker's idle share, median over the seeds.
  std::vector<double> idle_by_worker;
};

// Rows in the order of `policies`.
std::vector<PolicyRow> PolicyRows(const std::vector<RunOutcome>& runs,
                                  const std::vector<std::string>& policies,
                                  const std::string& baseline);

// The headline: time and clocks to target, speedup, throughput, accuracy.
std::string TableMarkdown(const std::vector<PolicyRow>& rows,
                          const std::string& baseline);
// Where the time went: phase shares, idle shares, staleness, dropped
// pushes, the policy's overhead and its predictor's error.
std::string DetailMarkdown(const std::vector<PolicyRow>& rows);
// Every metric's median, min and max.
std::string TableCsv(const std::vector<PolicyRow>& rows);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_TABLE_H_
