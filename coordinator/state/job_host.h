// What the coordinator's components need of the Coordinator beside an
// Outbox: refusing a bad message (counted, logged within a budget, and
// answered with an Error) and ending the job.
// Thread-safety: used from the coordinator's thread only.
#ifndef LOCKSTEP_COORDINATOR_STATE_JOB_HOST_H_
#define LOCKSTEP_COORDINATOR_STATE_JOB_HOST_H_

#include <string>

#include "common/status.h"

namespace lockstep {

class JobHost {
 public:
  virtual ~JobHost() = default;
  virtual void RejectBadMessage(const std::string& id, const Status& why) = 0;
  // The job ends with `why` once the messages received so far are handled
  // (a later abort replaces an earlier one).
  virtual void Abort(Status why) = 0;
  virtual bool aborted() const = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_STATE_JOB_HOST_H_
