// The data-plane tickets the coordinator gives its workers and evaluator
// (common/security/peer_ticket.h), and its check of the tickets their
// heartbeat sockets show. A worker's heartbeats come on a socket of their
// own (worker/heartbeat_thread.h), which names its rank: they count for
// that rank only when they prove a ticket of that rank, so a worker cannot
// keep another rank alive. It also seals the batch quota each Admission
// gives (common/security/fact_seal.h), which the worker's push carries to
// the shards. Without job keys (--security off) it gives no ticket, seals
// nothing and takes every heartbeat as it says.
// Thread-safety: the coordinator's thread only.
#ifndef LOCKSTEP_COORDINATOR_STATE_TICKET_DESK_H_
#define LOCKSTEP_COORDINATOR_STATE_TICKET_DESK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/security/fact_seal.h"
#include "common/security/peer_ticket.h"
#include "common/wire/message.h"
#include "common/wire/placement_messages.h"

namespace lockstep {

class TicketDesk {
 public:
  // A ticket for this registration of (role, rank); nullopt without keys.
  std::optional<PeerTicket> Issue(TicketRole role, int32_t rank);
  // Issue for a worker's (or the evaluator's) registration as `rank`, put
  // into its Welcome; its incarnation. Nothing (0) without keys: the data
  // plane is open.
  uint32_t IssueInto(wire::Role role, int32_t rank, WelcomeFields* welcome);
  // Whether heartbeat `beat`, sent as `role` `rank`, proves a ticket of
  // that role and rank (any registration of it: a coordinator restarted
  // with the job's keys honours its predecessor's). Always true without
  // keys.
  bool Vouches(wire::Role role, int32_t rank, const wire::Heartbeat& beat);
  // The seal of an admission to `fact`; empty without keys.
  std::string Seal(const AdmittedQuota& fact);

 private:
  // The mint (and the seal, under the same key), made at first use; null
  // without keys.
  TicketMint* Mint();

  std::optional<TicketMint> mint_;
  std::optional<FactSeal> seal_;
  bool made_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_STATE_TICKET_DESK_H_
