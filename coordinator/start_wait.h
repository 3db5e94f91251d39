// What a job's start still waits for, in words a person starting roles by
// hand can act on: which roles have not registered (and the binary that
// plays each), or that the registered ones are still loading their data
// and describing their model. The coordinator says it now and then while
// it waits, and when the registration deadline ends the job.
// Thread-safety: a pure function.
#ifndef LOCKSTEP_COORDINATOR_START_WAIT_H_
#define LOCKSTEP_COORDINATOR_START_WAIT_H_

#include <cstddef>
#include <string>

#include "common/job_config.h"

namespace lockstep {

struct StartProgress {
  size_t servers = 0;      // registered
  size_t workers = 0;      // registered
  bool evaluator = false;  // registered
  size_t described = 0;    // workers and evaluator that described the job
};

// "1 of 2 servers (lockstep-server), the evaluator (lockstep-worker
// --evaluator; or start the coordinator with --evaluators 0)", or, once
// everyone registered, "3 of 5 workers and the evaluator to load the data
// set and describe the model". Empty when nothing is missing.
std::string StartWaitsFor(const JobConfig& job, const StartProgress& progress);

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_START_WAIT_H_
