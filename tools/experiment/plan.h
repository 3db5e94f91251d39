// An experiment's plan: one run per scenario x policy x sweep point x
// seed, each a complete, validated job and the lockstep-launch command
// line that runs it, in OUT/<scenario>/<run group>/seed-<seed>/ (the run
// group: the policy's label, with its sweep point "@lr=0.05,momentum=0.9",
// as a folder name).
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_PLAN_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"
#include "tools/experiment/spec.h"
#include "tools/launch/hetero_spec.h"

namespace lockstep {

struct PlannedRun {
  std::string scenario;
  // The run group: the policy's label, "@" and its sweep point when it is
  // swept ("ssp0@lr=0.05,momentum=0.9"). Unique per scenario.
  std::string policy;
  std::string policy_label;  // the spec's label: "ssp0"
  std::string sweep_point;   // "lr=0.05,momentum=0.9"; "" without a sweep
  std::vector<SpecSetting> sweep_settings;  // the point's, by axis
  uint64_t seed = 0;
  std::string dir;
  // The job as the launcher will run it, resolved against the data set
  // (max_clocks is set), for the estimate and the report.
  JobConfig job;
  // The scenario's heterogeneity profile of each worker.
  HeteroProfiles profiles;
  // argv[0] is the launcher.
  std::vector<std::string> argv;
};

// Builds and checks every run of `spec`: the job of [job], then the
// scenario's, the policy's and the sweep point's settings over it, the
// policy and the seed (and a proportional split from the scenario's
// profiles: cost_model.h); its launcher command line is parsed and checked
// by the launcher's own ParseLaunchFlags (launch_check.h), launch flags and
// profiles included. The first bad run fails the plan, its error naming
// the spec file, the scenario and the run group (a launch flag or the
// profiles: the file, line, section and key), so a typo fails before any
// job runs; so do two run groups whose folder names collide.
StatusOr<std::vector<PlannedRun>> PlanExperiment(const ExperimentSpec& spec,
                                                 const std::string& out_dir,
                                                 const std::string& launcher);

// The folder name of a policy label ("ssp:3" -> "ssp_3").
std::string RunFolderName(const std::string& label);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_PLAN_H_
