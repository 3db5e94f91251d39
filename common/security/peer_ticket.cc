#include "common/security/peer_ticket.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <zmq.h>

#include <cstring>
#include <memory>
#include <utility>

namespace lockstep {
namespace {

constexpr size_t kCurveBytes = 32;

using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)>;

// The 32 raw bytes of a Z85 CurveZMQ key, or empty.
std::string RawKey(const std::string& z85) {
  std::string raw(kCurveBytes, '\0');
  if (z85.size() != 40 || zmq_z85_decode(reinterpret_cast<uint8_t*>(raw.data()),
                                         z85.c_str()) == nullptr) {
    return "";
  }
  return raw;
}

// X25519 of a secret and a public key (CurveZMQ's keys are Curve25519's).
StatusOr<std::string> Agree(const std::string& secret_z85,
                            const std::string& public_z85) {
  std::string secret = RawKey(secret_z85);
  const std::string pub = RawKey(public_z85);
  if (secret.empty() || pub.empty()) {
    return InvalidArgument("the job's keys do not decode");
  }
  PkeyPtr mine(
      EVP_PKEY_new_raw_private_key(
          EVP_PKEY_X25519, nullptr,
          reinterpret_cast<const unsigned char*>(secret.data()), secret.size()),
      &EVP_PKEY_free);
  OPENSSL_cleanse(secret.data(), secret.size());
  PkeyPtr theirs(
      EVP_PKEY_new_raw_public_key(
          EVP_PKEY_X25519, nullptr,
          reinterpret_cast<const unsigned char*>(pub.data()), pub.size()),
      &EVP_PKEY_free);
  if (mine == nullptr || theirs == nullptr) {
    return InvalidArgument("OpenSSL refused the job's X25519 keys");
  }
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new(mine.get(), nullptr), &EVP_PKEY_CTX_free);
  std::string shared(kCurveBytes, '\0');
  size_t size = shared.size();
  if (ctx == nullptr || EVP_PKEY_derive_init(ctx.get()) != 1 ||
      EVP_PKEY_derive_set_peer(ctx.get(), theirs.get()) != 1 ||
      EVP_PKEY_derive(ctx.get(),
                      reinterpret_cast<unsigned char*>(shared.data()),
                      &size) != 1 ||
      size != kCurveBytes) {
    return InvalidArgument("X25519 agreement on the job's keys failed");
  }
  return shared;
}

// A label with its terminating NUL: no label is a prefix of another's
// input.
std::string Label(const char* label) {
  return std::string(label, std::strlen(label) + 1);
}

void PutWord(std::string* out, uint32_t word) {
  out->append(reinterpret_cast<const char*>(&word), sizeof(word));
}

uint32_t GetWord(const std::string& in, size_t at) {
  uint32_t word = 0;
  std::memcpy(&word, in.data() + at, sizeof(word));
  return word;
}

}  // namespace

std::string HmacSha256(const std::string& key, const std::string& input) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), out,
       &size);
  return std::string(reinterpret_cast<char*>(out), size);
}

const char* TicketRoleName(TicketRole role) {
  switch (role) {
    case TicketRole::kWorker:
      return "worker";
    case TicketRole::kEvaluator:
      return "evaluator";
    case TicketRole::kServer:
      return "server";
  }
  return "unknown";
}

std::string PeerTicket::Encode() const {
  std::string out;
  PutWord(&out, static_cast<uint32_t>(role));
  PutWord(&out, static_cast<uint32_t>(rank));
  PutWord(&out, incarnation);
  return out;
}

StatusOr<PeerTicket> PeerTicket::Decode(const std::string& bytes) {
  if (bytes.size() != kTicketBytes) {
    return InvalidArgument("a ticket is " + std::to_string(kTicketBytes) +
                           " bytes, not " + std::to_string(bytes.size()));
  }
  const uint32_t role = GetWord(bytes, 0);
  if (role < static_cast<uint32_t>(TicketRole::kWorker) ||
      role > static_cast<uint32_t>(TicketRole::kServer)) {
    return InvalidArgument("a ticket of unknown role " + std::to_string(role));
  }
  PeerTicket ticket;
  ticket.role = static_cast<TicketRole>(role);
  ticket.rank = static_cast<int32_t>(GetWord(bytes, 4));
  ticket.incarnation = GetWord(bytes, 8);
  return ticket;
}

StatusOr<std::string> TicketKey(const RoleKeys& keys) {
  if (keys.role != KeyRole::kCoordinator && keys.role != KeyRole::kServer) {
    return FailedPrecondition(std::string("a ") + KeyRoleName(keys.role) +
                              " key cannot compute the job's ticket key");
  }
  // Each side agrees with the other's public key.
  const KeyRole other = keys.role == KeyRole::kCoordinator
                            ? KeyRole::kServer
                            : KeyRole::kCoordinator;
  LS_ASSIGN_OR_RETURN(std::string shared,
                      Agree(keys.secret, keys.public_key(other)));
  std::string key = HmacSha256(shared, Label("lockstep ticket key"));
  OPENSSL_cleanse(shared.data(), shared.size());
  return key;
}

std::string TicketSecret(const std::string& ticket_key,
                         const PeerTicket& ticket) {
  return HmacSha256(ticket_key, Label("lockstep ticket") + ticket.Encode());
}

StatusOr<TicketMint> TicketMint::Create(const RoleKeys& keys) {
  LS_ASSIGN_OR_RETURN(std::string key, TicketKey(keys));
  TicketMint mint(std::move(key));
  // A restarted coordinator numbers on from a random point, not from 1:
  // servers that outlived its predecessor keep fencing that one's removed
  // registrations (server/guard/request_rules.h), which it must not reissue.
  RAND_bytes(reinterpret_cast<unsigned char*>(&mint.issued_),
             sizeof(mint.issued_));
  mint.issued_ &= 0x7FFFFFFFu;  // never 0, a ticket-less connection's
  return mint;
}

PeerTicket TicketMint::Mint(TicketRole role, int32_t rank) {
  PeerTicket ticket;
  ticket.role = role;
  ticket.rank = rank;
  ticket.incarnation = ++issued_;
  ticket.secret = TicketSecret(key_, ticket);
  return ticket;
}

std::string HeartbeatProof(const PeerTicket& ticket) {
  return HmacSha256(ticket.secret, Label("lockstep heartbeat"));
}

bool TicketMint::VerifiesHeartbeat(const PeerTicket& ticket,
                                   const std::string& proof) const {
  PeerTicket genuine = ticket;
  genuine.secret = TicketSecret(key_, ticket);
  const std::string expected = HeartbeatProof(genuine);
  OPENSSL_cleanse(genuine.secret.data(), genuine.secret.size());
  return proof.size() == expected.size() &&
         CRYPTO_memcmp(proof.data(), expected.data(), proof.size()) == 0;
}

}  // namespace lockstep
