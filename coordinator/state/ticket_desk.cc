#include "coordinator/state/ticket_desk.h"

#include "common/logging.h"
#include "common/transport/transport_keys.h"

namespace lockstep {

TicketMint* TicketDesk::Mint() {
  if (!made_) {
    made_ = true;
    if (const RoleKeys* keys = InstalledTransportKeys()) {
      auto mint = TicketMint::Create(*keys);
      auto seal = FactSeal::Create(*keys);
      if (mint.ok() && seal.ok()) {
        mint_.emplace(std::move(*mint));
        seal_.emplace(std::move(*seal));
      } else {
        // The keys loaded, so this is not expected; shards will refuse
        // every worker, saying so.
        LS_LOG(Error) << "no data-plane tickets: " << mint.status().message();
      }
    }
  }
  return mint_ ? &*mint_ : nullptr;
}

std::optional<PeerTicket> TicketDesk::Issue(TicketRole role, int32_t rank) {
  if (InstalledTransportKeys() == nullptr) return std::nullopt;
  TicketMint* mint = Mint();
  if (mint == nullptr) return std::nullopt;
  return mint->Mint(role, rank);
}

uint32_t TicketDesk::IssueInto(wire::Role role, int32_t rank,
                               WelcomeFields* welcome) {
  const std::optional<PeerTicket> ticket =
      Issue(role == wire::Role::Evaluator ? TicketRole::kEvaluator
                                          : TicketRole::kWorker,
            rank);
  if (!ticket) return 0;
  welcome->ticket_incarnation = ticket->incarnation;
  welcome->ticket_secret = ticket->secret;
  return ticket->incarnation;
}

bool TicketDesk::Vouches(wire::Role role, int32_t rank,
                         const wire::Heartbeat& beat) {
  if (InstalledTransportKeys() == nullptr) return true;
  TicketMint* mint = Mint();
  if (mint == nullptr || beat.ticket_proof() == nullptr) return false;
  PeerTicket ticket;
  ticket.role = role == wire::Role::Evaluator ? TicketRole::kEvaluator
                                              : TicketRole::kWorker;
  ticket.rank = rank;
  ticket.incarnation = beat.ticket_incarnation();
  return mint->VerifiesHeartbeat(ticket,
                                 std::string(BytesOf(beat.ticket_proof())));
}

std::string TicketDesk::Seal(const AdmittedQuota& fact) {
  if (InstalledTransportKeys() == nullptr || Mint() == nullptr) return "";
  return seal_->Seal(fact);
}

}  // namespace lockstep
