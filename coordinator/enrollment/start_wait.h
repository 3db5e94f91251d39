// What a job's start still waits for, in words a person starting roles by
// hand can act on: which roles have not registered (and the binary that
// plays each), or that the registered ones are still loading their data
// and describing their model. The coordinator says it now and then while
// it waits, and when the registration deadline ends the job.
// Thread-safety: a pure function.
#ifndef LOCKSTEP_COORDINATOR_ENROLLMENT_START_WAIT_H_
#define LOCKSTEP_COORDINATOR_ENROLLMENT_START_WAIT_H_

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/job_config.h"

namespace lockstep {

struct StartProgress {
  size_t servers = 0;      // registered
  size_t workers = 0;      // registered
  bool evaluator = false;  // registered
  size_t described = 0;    // workers and evaluator that described the job
  // Left out for a device their machine lacks: the job starts without
  // them (and without the evaluator).
  size_t excused_workers = 0;
  bool evaluator_excused = false;
};

// Who the start no longer waits for: workers (by rank) and the evaluator
// left out for a device their machine lacks. A rank whose slot a new
// process took since is no vacancy.
class StartExcusals {
 public:
  void ExcuseWorker(int rank) { ranks_.insert(rank); }
  void ExcuseEvaluator() { evaluator_ = true; }
  bool evaluator() const { return evaluator_; }
  // The excused ranks no process in `held` holds.
  size_t Vacancies(const std::vector<uint32_t>& held) const;

 private:
  std::set<int> ranks_;
  bool evaluator_ = false;
};

// "1 of 2 servers (lockstep-server), the evaluator (lockstep-worker
// --evaluator; or start the coordinator with --evaluators 0)", or, once
// everyone registered, "3 of 5 workers and the evaluator to load the data
// set and describe the model". Empty when nothing is missing.
std::string StartWaitsFor(const JobConfig& job, const StartProgress& progress);

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_ENROLLMENT_START_WAIT_H_
