// The best of each policy's sweep (sweep.h) and the whole sweep as a table
// and a CSV. Each run group is scored over its seeds by the spec's
// sweep_criterion:
//   time-to-target  the median time to the main target (a seed that never
//                   reached it counts as never), ties and never-reached
//                   broken by the mean test accuracy over the evaluation
//                   points (the default);
//   mean-accuracy   the mean test accuracy over the evaluation points,
//                   ties broken by the median time to target;
//   final-accuracy  the median final test accuracy, ties broken by the
//                   mean over the evaluation points.
// A group with no finished run is never chosen over one with a finished
// run; equal groups go to the first in the spec's order.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_SWEEP_REPORT_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_SWEEP_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "tools/experiment/table.h"

namespace lockstep {

// One seed of a run group.
struct SweepSeed {
  uint64_t seed = 0;
  bool ok = false;            // finished; the rest NaN when not
  double time_s = 0;          // to the main target; +inf never
  double mean_accuracy = 0;   // over the run's evaluation points
  double final_accuracy = 0;  // the run's final evaluation
};

struct SweepGroup {
  std::string policy;       // the spec's label
  std::string sweep_point;  // "lr=0.05,momentum=0.9"; "" without a sweep
  std::vector<SpecSetting> settings;
  double main_target = 0;
  std::vector<SweepSeed> seeds;
  int ok = 0;  // finished seeds
  // Over the finished seeds; NaN without one.
  double median_time_s = 0, mean_accuracy = 0, median_final_accuracy = 0;
  bool chosen = false;  // the best of its policy's groups
  std::string Name() const {
    return sweep_point.empty() ? policy : policy + "@" + sweep_point;
  }
};

// The run groups of one scenario's `runs`, in the order of `policies` and
// then of first appearance, scored, each policy's best marked chosen.
std::vector<SweepGroup> ScoreSweep(const std::vector<RunOutcome>& runs,
                                   const std::vector<std::string>& policies,
                                   const std::string& criterion);

// Whether `a` is better than `b` by `criterion`.
bool BetterGroup(const SweepGroup& a, const SweepGroup& b,
                 const std::string& criterion);

// What the criterion means, one sentence for the report.
std::string CriterionText(const std::string& criterion, double main_target);

// The swept groups of one scenario: a row per group with its seed counts
// and criterion values, each policy's chosen one marked. "" when nothing
// was swept.
std::string SweepMarkdown(const std::vector<SweepGroup>& groups,
                          const std::string& criterion);

// Every group of every scenario and each of its seeds: the settings (a
// column per swept key), the seed's values and the group's.
std::string SweepCsv(
    const std::vector<std::pair<std::string, std::vector<SweepGroup>>>&
        scenarios,
    const std::string& criterion);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_SWEEP_REPORT_H_
