// The strategy-comparison harness: runs the same job once per sync policy
// (and repeat) through lockstep-launch, then reads each run directory's
// summary.json and prints a table with the speedup of every policy over a
// baseline measured in the same experiment.
// Thread-safety: not thread-safe; one experiment at a time.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_H_

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

struct ExperimentOptions {
  std::vector<std::string> policies;     // --sync values, e.g. "bsp", "ssp:3"
  std::string baseline = "bsp";          // speedups are relative to this
  int repeat = 1;                        // runs per policy (median reported)
  std::string out_dir;                   // one run directory per run, + results
  std::string launcher;                  // path of lockstep-launch
  std::vector<std::string> launch_args;  // passed to every run
  double timeout_s = 1800;               // per run
};

// One policy's results (medians over its repeats).
struct PolicyResult {
  std::string policy;
  int runs = 0;
  int failed = 0;
  std::optional<double> time_to_target_s;  // unset if never reached
  double wall_s = 0;
  double samples_per_s = 0;
  double test_accuracy = 0;
  double clocks = 0;
  double mean_wait_s = 0;
  double overhead_share = 0;
  double clocks_per_s = 0;
  // Share of the workers' time in each phase of a clock.
  double compute_share = 0, push_share = 0, pull_share = 0, wait_share = 0;
  std::optional<double> speedup;  // baseline time-to-target / this one
};

// Parses `lockstep-experiment` flags; everything after "--" goes to the
// launcher.
StatusOr<ExperimentOptions> ParseExperimentFlags(int argc,
                                                 const char* const* argv);

// Runs every policy `repeat` times. A failed run is counted, not fatal.
StatusOr<std::vector<PolicyResult>> RunExperiment(
    const ExperimentOptions& options);

// A markdown table of the results.
std::string FormatResults(const std::vector<PolicyResult>& results,
                          const std::string& baseline);

// The median of `values` (which must not be empty).
double Median(std::vector<double> values);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_H_
