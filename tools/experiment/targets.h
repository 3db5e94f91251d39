// What each policy reached: for every target (accuracies, and a test-loss
// target), how many seeds reached it and the median time, clocks and
// samples to it with 95% intervals and the speedup over the baseline
// (interval.h), all from each run's eval.jsonl; and, for runs stopped by a
// time budget (budget_s), what they reached by then.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_TARGETS_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_TARGETS_H_

#include <string>
#include <vector>

#include "tools/experiment/interval.h"
#include "tools/experiment/table.h"

namespace lockstep {

struct TargetRow {
  std::string policy;  // as the tables name it: "ssp0@lr=0.05"
  RunTarget target;
  int runs = 0;     // finished
  int reached = 0;  // of them, reached the target
  // Over the finished seeds, never-reached as never.
  Interval time_s, clocks, samples, speedup;
};

// The targets of a report: the main accuracy target and `accuracies`,
// ascending and distinct, then the loss target (when > 0).
std::vector<RunTarget> ReportTargets(double main_target,
                                     const std::vector<double>& accuracies,
                                     double loss);

// A row per policy (in the order of `policies`: the spec's labels) and
// target. The speedup pairs seeds with the baseline's.
std::vector<TargetRow> TargetRows(const std::vector<RunOutcome>& runs,
                                  const std::vector<std::string>& policies,
                                  const std::string& baseline,
                                  const std::vector<RunTarget>& targets);

std::string TargetsMarkdown(const std::vector<TargetRow>& rows,
                            const std::string& baseline);
std::string TargetsCsv(const std::vector<TargetRow>& rows);

// The runs' final evaluation, at the end of their `budget_s` seconds of
// training: a row per policy with the median test accuracy and loss, the
// clocks and samples done, with intervals.
std::string BudgetMarkdown(const std::vector<RunOutcome>& runs,
                           const std::vector<std::string>& policies,
                           double budget_s);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_TARGETS_H_
