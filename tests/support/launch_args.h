// Test support: the command line of a job, built from a JobConfig instead
// of typed by hand, so a test says which job it runs by setting the fields
// it cares about and every other field keeps JobConfig's default.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TESTS_SUPPORT_LAUNCH_ARGS_H_
#define LOCKSTEP_TESTS_SUPPORT_LAUNCH_ARGS_H_

#include <string>
#include <utility>
#include <vector>

#include "common/job_config.h"
#include "common/job_fields.h"

namespace lockstep {

// The flags of lockstep-launch (or lockstep-coordinator) that run `job`:
// every job field (JobConfigToFlags), then `extra`, the flags that are not
// job fields (--run-dir, --supervise, --hetero, --timeout-s, ...).
// Not for --resume: the launcher applies the job flags given with it over
// the snapshot's job, so a full flag list would replace that job.
inline std::vector<std::string> LaunchArgs(
    const JobConfig& job, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = JobConfigToFlags(job);
  args.insert(args.end(), std::make_move_iterator(extra.begin()),
              std::make_move_iterator(extra.end()));
  return args;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_LAUNCH_ARGS_H_
