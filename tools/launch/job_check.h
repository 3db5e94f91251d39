// The launcher's check of a whole job before it starts any process: every
// registry (sync policies, optimizers, data sets, models) validates its
// own part, and the job is resolved from the data set's sizes, so a bad
// flag is one line on the launcher's stderr, and config.json records the
// clock count. The roles check the same things again on their side.
// Thread-safety: pure function (reads the data set's files).
#ifndef LOCKSTEP_TOOLS_LAUNCH_JOB_CHECK_H_
#define LOCKSTEP_TOOLS_LAUNCH_JOB_CHECK_H_

#include "common/job_config.h"
#include "common/status.h"

namespace lockstep {

// Validates `job`, resolves its data order (the policy's choice for
// "auto") and its data-derived fields (train_samples, input_dim, classes,
// max_clocks), and returns it. Errors name the bad flag or value.
StatusOr<JobConfig> CheckJob(JobConfig job);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_JOB_CHECK_H_
