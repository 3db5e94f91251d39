// The job a resume continues: the one its snapshot manifest records, with
// the job flags given on the resuming command line over it. A resume may
// run longer, on other counts of servers and workers, with another
// learning rate or policy; it may not change what a snapshot round holds
// state of (the model, the optimizer, the data set: the field table's
// fixed_on_resume), since no round of one restores into the other. Both
// the launcher (before any role starts) and the coordinator (started by
// hand or by an engine) compose and check a resumed job here, so the
// refusal names the flag before anything runs, and a round is never
// blamed for a job that differs from its own.
// Thread-safety: reentrant.
#ifndef LOCKSTEP_COMMON_JOB_RESUME_H_
#define LOCKSTEP_COMMON_JOB_RESUME_H_

#include <boost/program_options.hpp>

#include "common/job_config.h"
#include "common/status.h"

namespace lockstep {

// OK when `requested` may continue `recorded`; else FailedPrecondition
// naming the first field that may not change, both values and why. A field
// resolved from the data set is compared only when both jobs have it.
Status CheckResumeChanges(const JobConfig& recorded,
                          const JobConfig& requested);

// `recorded` with the job flags given in `vm` (not defaulted) over it.
// --epochs given without --clocks derives the clock count anew (the
// recorded count was resolved from the old epochs). Whether the change can
// resume is CheckResumeChanges's (SnapshotManifest::CheckResumableBy asks
// it), once, by whoever resumes. Errors: a flag that does not parse, an
// invalid job.
StatusOr<JobConfig> ResumedJob(const boost::program_options::variables_map& vm,
                               const JobConfig& recorded);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_JOB_RESUME_H_
