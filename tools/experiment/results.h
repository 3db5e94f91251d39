// What an experiment's runs measured: each run's summary.json (written by
// the coordinator), and per scenario one table row per policy with the
// median over seeds and the min-max spread.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_RESULTS_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_RESULTS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

// One run's summary.json: its numeric fields by name, and the time to
// target (null in the file when the target was never reached).
struct RunSummary {
  std::map<std::string, double> fields;
  // The policy's own gauges ("lockstep_quota{worker=\"0\"}").
  std::map<std::string, double> policy_metrics;
  std::optional<double> time_to_target_s;
  double Get(const std::string& key) const;  // NaN when absent
};

// Reads DIR/summary.json. NotFound when the run left none.
StatusOr<RunSummary> ReadRunSummary(const std::string& dir);

// The median of `values` (which must not be empty).
double Median(std::vector<double> values);

// The median and range of some runs' values.
struct Spread {
  int n = 0;
  double median = 0, min = 0, max = 0;
  static std::optional<Spread> Of(const std::vector<double>& values);
  // "15.6 (14.9-16.2)", or "15.6" for one value; `digits` decimals and
  // `unit` after the median: "1.52x (1.40-1.61)".
  std::string Text(int digits, const std::string& unit = "") const;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_RESULTS_H_
