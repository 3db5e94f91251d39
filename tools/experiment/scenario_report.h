// One scenario's part of an experiment report: its recorded runs read once,
// each policy's sweep scored and its best run group chosen
// (sweep_report.h), and the tables of the chosen groups: the headline with
// 95% intervals and the bound of a perfect batch split (cost_model.h),
// where the time went, around the event clock, every target, the time
// budget and the sweep.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_SCENARIO_REPORT_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_SCENARIO_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/experiment/runner.h"
#include "tools/experiment/spec.h"
#include "tools/experiment/sweep_report.h"
#include "tools/experiment/table.h"
#include "tools/experiment/targets.h"

namespace lockstep {

struct ScenarioReport {
  std::string scenario;
  double main_target = 0;          // accuracy; 0: none
  std::vector<SweepGroup> groups;  // every run group
  std::vector<RunOutcome> chosen;  // the runs of each policy's chosen group
  // Each policy's chosen run group (PlannedRun::policy), in the spec's
  // order; "" for a policy without a recorded run.
  std::vector<std::string> chosen_groups;
  std::vector<PolicyRow> rows;
  std::vector<TargetRow> targets;  // empty without targets or target_loss
  std::optional<double> bound;
  uint64_t global_batch = 0;
  int64_t clocks = 0;
  double budget_s = 0;  // the runs' time budget; 0: none
};

// The main target of a run of `job`: its target accuracy, else the
// highest of the spec's targets; 0 for none.
double MainTarget(const ExperimentSpec& spec, const JobConfig& job);

// Whether `policy` sizes batches by speed (LB-BSP, or a proportional
// static split): its rows show the bound.
bool SplitsBatches(const SpecPolicy& policy);

// The bound of a scenario whose runs are `run` (any of them): how much
// shorter a perfect batch split makes the run's clocks than BSP's even
// split of the same global batch, from the compute cost model of its
// profiles; nullopt when a worker has no cost model.
std::optional<double> SplitBound(const PlannedRun& run);

ScenarioReport BuildScenarioReport(const ExperimentSpec& spec,
                                   const std::vector<RunState>& states,
                                   const SpecScenario& scenario);

// The scenario's tables (no heading, plots or CSV links).
std::string ScenarioTables(const ExperimentSpec& spec,
                           const SpecScenario& scenario,
                           const ScenarioReport& report,
                           const std::vector<RunState>& states);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_SCENARIO_REPORT_H_
