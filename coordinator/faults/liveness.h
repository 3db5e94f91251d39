// Which peers are alive: heartbeats answered (they go both ways, so peers
// notice a dead coordinator) and peers silent past their limit handed to
// the component that removes them (a worker or the evaluator to
// Enrollment, a server to Recovery).
// Thread-safety: the coordinator's thread only.
#ifndef LOCKSTEP_COORDINATOR_FAULTS_LIVENESS_H_
#define LOCKSTEP_COORDINATOR_FAULTS_LIVENESS_H_

#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/wire/message.h"
#include "coordinator/enrollment/enrollment.h"
#include "coordinator/faults/recovery.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"
#include "coordinator/state/run_recorder.h"
#include "coordinator/state/ticket_desk.h"

namespace lockstep {

class Liveness {
 public:
  // A peer is dead after `dead_after_ms` of silence (a registering one
  // after `register_timeout_ms`, membership.h).
  Liveness(int64_t dead_after_ms, int64_t register_timeout_ms, Outbox& outbox,
           Membership& members, const RunRecorder& recorder,
           TicketDesk& tickets)
      : dead_after_ms_(dead_after_ms),
        register_timeout_ms_(register_timeout_ms),
        outbox_(outbox),
        members_(members),
        recorder_(recorder),
        tickets_(tickets) {}

  // Answers a heartbeat with the newest committed clock.
  void ReplyHeartbeat(const std::string& id);

  // A heartbeat from a socket that is not a member's: a worker's heartbeat
  // thread has a socket of its own, matched by role and rank, which it
  // proves with its ticket (TicketDesk). True when it was that: the owner
  // marked alive and the heartbeat answered, or, without a proof of that
  // rank's ticket, neither (counted: refused_heartbeats).
  bool HandleSideHeartbeat(const std::string& id, const wire::Envelope& env);
  uint64_t refused_heartbeats() const { return refused_heartbeats_; }

  // Removes every peer silent past its limit; an error when a recovery
  // outlived the registration timeout (the job ends). When the coordinator
  // itself did not run for half the limit (paused, swapped out: its peers'
  // messages may still be on their way in), every peer's silence counts
  // from now instead.
  Status Check(Enrollment& enrollment, Recovery& recovery);

 private:
  const int64_t dead_after_ms_;
  const int64_t register_timeout_ms_;
  Outbox& outbox_;
  Membership& members_;
  const RunRecorder& recorder_;
  TicketDesk& tickets_;
  uint64_t refused_heartbeats_ = 0;
  int64_t last_check_ms_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_FAULTS_LIVENESS_H_
