// The tables of one scenario: a row per policy with medians over the seeds
// and their min-max, as Markdown and CSV. Time to target and the speedup
// come with 95% intervals (interval.h): the median time over every seed
// (never-reached as never) and the ratio of the baseline's median to the
// policy's. The CSV also keeps the speedup paired by seed (the baseline's
// time to target over the policy's, for every seed where both reached it)
// with its min-max.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_TABLE_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/experiment/interval.h"
#include "tools/experiment/run_metrics.h"
#include "tools/experiment/spec.h"

namespace lockstep {

// One finished run of a scenario, as the tables need it.
struct RunOutcome {
  std::string policy;       // the spec's label
  std::string sweep_point;  // of its run group; "" without a sweep
  std::vector<SpecSetting> sweep_settings;  // the point's, by axis
  uint64_t seed = 0;
  // The accuracy whose time to target the tables show, from the run's
  // evaluations; 0: the summary's time_to_target_s.
  double main_target = 0;
  std::optional<RunMetrics> metrics;  // unset: failed, timed out, unreadable
  // The time to the main target; nullopt when not reached (or no metrics).
  std::optional<double> TimeToTarget() const;
  std::optional<double> ClocksToTarget() const;
};

struct PolicyRow {
  std::string policy;
  std::string sweep_point;  // the chosen one of a swept policy
  int runs = 0;             // finished ok
  int failed = 0;           // failed, timed out or unreadable
  int reached = 0;          // runs that reached the target
  std::optional<Spread> time_to_target_s, speedup, clocks_to_target, wall_s,
      mean_clock_ms, clocks_per_s, samples_per_s, test_accuracy, clocks,
      compute_share, push_share, pull_share, wait_share, idle_mean, idle_max,
      dropped_pushes, staleness_p50, staleness_p99, overhead_share,
      predictor_rmse_share,
      // Barrier policies (clock_balance.h): clock-time MAPE at the assigned
      // quota and the last-value rule's on the same clocks; barrier idle
      // share, the oracle split's, and clock time over the oracle's.
      time_mape, last_value_mape, barrier_idle, oracle_idle, clock_ratio;
  // Each worker's idle share, median over the seeds.
  std::vector<double> idle_by_worker;
  // Median time to target over every finished seed (never-reached: never),
  // and the ratio of the baseline's to it, with 95% intervals.
  Interval time_ci, speedup_ci;
  // What a perfect batch split could gain over BSP's (cost_model.h), on
  // the rows of policies that split batches; nullopt elsewhere.
  std::optional<double> bound;
  // "bsp", or "ssp0@lr=0.05" for the chosen point of a swept policy.
  std::string Name() const {
    return sweep_point.empty() ? policy : policy + "@" + sweep_point;
  }
};

// Rows in the order of `policies`.
std::vector<PolicyRow> PolicyRows(const std::vector<RunOutcome>& runs,
                                  const std::vector<std::string>& policies,
                                  const std::string& baseline);

// The headline: time and clocks to target, speedup (and the bound when a
// row has one), throughput, accuracy.
std::string TableMarkdown(const std::vector<PolicyRow>& rows,
                          const std::string& baseline);
// Where the time went: phase shares, idle shares, staleness, dropped
// pushes, the policy's overhead and its predictor's error.
std::string DetailMarkdown(const std::vector<PolicyRow>& rows);
// A CSV field, quoted when it holds a separator or a quote.
std::string CsvText(const std::string& text);

// Every metric's median, min and max.
std::string TableCsv(const std::vector<PolicyRow>& rows);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_TABLE_H_
