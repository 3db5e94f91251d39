// Who a data-plane connection speaks for: a ticket names one peer (its
// role, rank and registration), and its secret proves the holder was given
// it. The data plane's handshake (transport/stream/handshake.h) proves the
// secret; a shard takes the sender's rank from the connection, never from
// a message.
//
// A worker's ticket is minted by the coordinator at each registration and
// sent in its Welcome (the control plane is CurveZMQ: encrypted). The
// secret is HMAC-SHA256 of the ticket under the job's ticket key, which
// only the coordinator and the servers can compute: the X25519 agreement
// of the coordinator's and the server key's CurveZMQ keys (either secret
// with the other's public key). A worker key holds neither secret, so a
// worker can prove only the tickets it was given - not another rank's, not
// a server's - and cannot derive another connection's record keys.
// Servers mint their own tickets (role server) for server-to-server links
// (replication): a worker can never pose as one.
// Thread-safety: values and reentrant functions; a TicketMint is used by
// one thread.
#ifndef LOCKSTEP_COMMON_SECURITY_PEER_TICKET_H_
#define LOCKSTEP_COMMON_SECURITY_PEER_TICKET_H_

#include <cstdint>
#include <string>

#include "common/security/job_keys.h"
#include "common/status.h"

namespace lockstep {

enum class TicketRole : uint32_t { kWorker = 1, kEvaluator = 2, kServer = 3 };
const char* TicketRoleName(TicketRole role);  // "worker", ...

inline constexpr size_t kTicketBytes = 12;  // role, rank, incarnation
inline constexpr size_t kTicketSecretBytes = 32;

struct PeerTicket {
  TicketRole role = TicketRole::kWorker;
  int32_t rank = -1;
  // Which registration of the rank (the coordinator counts them): a
  // ticket of an earlier one can be fenced.
  uint32_t incarnation = 0;
  std::string secret;  // kTicketSecretBytes raw bytes

  // The ticket as sent (kTicketBytes, little-endian), without the secret.
  std::string Encode() const;
  // Errors: not kTicketBytes, or a role that does not exist.
  static StatusOr<PeerTicket> Decode(const std::string& bytes);
};

// HMAC-SHA256 of `input` under `key` (32 bytes): what tickets, their
// proofs and the handshake's proofs and record keys are made with.
std::string HmacSha256(const std::string& key, const std::string& input);

// The job's ticket key, computed from a coordinator's or a server's keys.
// Errors: another role's keys (a worker or admin key cannot compute it),
// or keys that do not decode.
StatusOr<std::string> TicketKey(const RoleKeys& keys);
// The secret of `ticket` (its fields; its own secret is ignored).
std::string TicketSecret(const std::string& ticket_key,
                         const PeerTicket& ticket);

// What a worker's heartbeat socket shows for its ticket: HMAC-SHA256 of a
// label under the ticket's secret. The same on every heartbeat, so it is
// sent only on the encrypted control plane: only the ticket's holder and
// the ticket key's can make it.
std::string HeartbeatProof(const PeerTicket& ticket);

// Mints tickets under one ticket key, and checks them.
class TicketMint {
 public:
  // Errors: TicketKey's.
  static StatusOr<TicketMint> Create(const RoleKeys& keys);
  // A ticket for the next registration of (role, rank): its incarnation is
  // this mint's next number, counted from a random start.
  PeerTicket Mint(TicketRole role, int32_t rank);
  // Whether `proof` is the HeartbeatProof of `ticket` (its fields; its
  // secret is ignored).
  bool VerifiesHeartbeat(const PeerTicket& ticket,
                         const std::string& proof) const;

 private:
  explicit TicketMint(std::string key) : key_(std::move(key)) {}
  std::string key_;
  uint32_t issued_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_SECURITY_PEER_TICKET_H_
