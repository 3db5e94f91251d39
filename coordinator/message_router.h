// Where each message on the coordinator's socket goes: verified and
// checked against the sender's key first (access_control.h); then a
// Register to enrollment (or recovery, for a returning server), a tool's
// round request to the snapshot rounds, a worker's side heartbeat to
// liveness; from a peer that is not a member, NotMember for what a member
// would send (a role of an earlier coordinator process registers again),
// a rejection otherwise; and each member's message to the component that
// takes it from the member's role.
// Thread-safety: the coordinator's thread only.
#ifndef LOCKSTEP_COORDINATOR_MESSAGE_ROUTER_H_
#define LOCKSTEP_COORDINATOR_MESSAGE_ROUTER_H_

#include <cstdint>
#include <string>

#include "common/wire/message.h"
#include "coordinator/clock/clock_driver.h"
#include "coordinator/enrollment/access_control.h"
#include "coordinator/enrollment/enrollment.h"
#include "coordinator/faults/credential_bans.h"
#include "coordinator/faults/departures.h"
#include "coordinator/faults/liveness.h"
#include "coordinator/faults/push_refusals.h"
#include "coordinator/faults/recovery.h"
#include "coordinator/rounds/snapshot_rounds.h"
#include "coordinator/state/job_host.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"

namespace lockstep {

class MessageRouter {
 public:
  // The components a message may be for, all outliving the router.
  struct Components {
    Membership& members;
    AccessControl& access;
    Enrollment& enrollment;
    Recovery& recovery;
    SnapshotRounds& rounds;
    ClockDriver& clock;
    Liveness& liveness;
    Departures& departures;
    PushRefusals& refusals;
    CredentialBans& bans;
  };

  MessageRouter(Components c, Outbox& outbox, JobHost& host)
      : c_(c), outbox_(outbox), host_(host) {}

  // Hands `msg` to the component it is for, or refuses it (JobHost).
  void Handle(Message& msg);

 private:
  void HandleNonMember(const std::string& id, const wire::Envelope& env);
  // `credential`: the worker credential the sender's key is (-1: none).
  // One banned (credential_bans.h) is refused, as a server or the
  // evaluator too.
  void HandleRegister(const std::string& id, const wire::Register& reg,
                      int64_t credential);
  // Dispatches a verified message from a registered peer.
  // A server's own messages: Committed, SnapshotDone, Restored,
  // PushRefused, and under --replicas BackupReady and Promoted.
  void HandleServerMessage(const std::string& id, Peer& peer,
                           const wire::Envelope& env);
  void HandlePeerMessage(const std::string& id, Peer& peer,
                         const wire::Envelope& env);
  void HandleAdmit(const std::string& id, Peer& peer, int64_t clock);
  void HandleError(const std::string& id, Peer& peer, const wire::Error& err);

  Components c_;
  Outbox& outbox_;
  JobHost& host_;
  int64_t not_member_log_budget_ = 20;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_MESSAGE_ROUTER_H_
