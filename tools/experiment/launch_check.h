// A run's lockstep-launch command line, checked by the launcher's own
// parser and checks (ParseLaunchFlags) when the experiment is planned, so a
// value the launcher would refuse stops the experiment before anything
// runs instead of failing every run. The flags a spec's [launch] table, a
// scenario's `launch` table or its `hetero` set carry where they were
// written, so a refusal names the spec's file, line, section and key.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_LAUNCH_CHECK_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_LAUNCH_CHECK_H_

#include <cstddef>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"

namespace lockstep {

// One launcher flag that a spec sets, and where.
struct SpecSourcedFlag {
  std::string flag;   // "--data-transport"
  std::string value;  // "ipcc"
  std::string where;  // "spec.toml:9: [launch] data_transport"
};

// A run's launcher command line in three parts, in argv order.
struct LaunchCommand {
  std::vector<std::string> job;         // argv[0] and the job's flags
  std::vector<SpecSourcedFlag> launch;  // the flags the spec's tables set
  std::vector<std::string> run;         // --run-dir DIR --timeout-s S

  // The argv with the first `launch_flags` of `launch` only.
  std::vector<std::string> Argv(size_t launch_flags) const;
  std::vector<std::string> Argv() const { return Argv(launch.size()); }
};

// The job lockstep-launch would run for `command`, as its ParseLaunchFlags
// parses and checks it (the data set probed, the clock count resolved).
// When the launcher refuses the command but accepts it without the spec's
// launch flags, the error is "WHERE: REASON" for the first of them whose
// addition it refuses (so a pair of flags that conflict names the later
// one); otherwise the job is at fault: `job_where` (which run it is) and
// the launcher's reason.
StatusOr<JobConfig> CheckLaunchCommand(const LaunchCommand& command,
                                       const std::string& job_where);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_LAUNCH_CHECK_H_
