#include "common/security/worker_credentials.h"

#include <openssl/crypto.h>
#include <zmq.h>

#include <cstring>
#include <filesystem>

#include "common/durable_file.h"
#include "common/security/peer_ticket.h"

namespace lockstep {
namespace {

constexpr size_t kRawKeyBytes = 32;
constexpr size_t kZ85Chars = 40;

// Credential `number`'s key pair under `ticket_key`, Z85.
Status DeriveKeyPair(const std::string& ticket_key, uint32_t number,
                     std::string* public_z85, std::string* secret_z85) {
  std::string input("lockstep worker credential\0", 27);
  for (int i = 0; i < 4; ++i) {
    input.push_back(static_cast<char>((number >> (8 * i)) & 0xFF));
  }
  std::string raw = HmacSha256(ticket_key, input);
  char secret[kZ85Chars + 1], pub[kZ85Chars + 1];
  const bool encoded =
      zmq_z85_encode(secret, reinterpret_cast<const uint8_t*>(raw.data()),
                     kRawKeyBytes) != nullptr;
  OPENSSL_cleanse(raw.data(), raw.size());
  if (!encoded || zmq_curve_public(pub, secret) != 0) {
    OPENSSL_cleanse(secret, sizeof(secret));
    return Internal(
        "cannot derive a worker credential (libzmq without CURVE?)");
  }
  *public_z85 = pub;
  *secret_z85 = secret;
  OPENSSL_cleanse(secret, sizeof(secret));
  return Status::Ok();
}

Status CheckNumber(uint32_t number) {
  if (number < kMaxWorkerCredentials) return Status::Ok();
  return InvalidArgument("worker credential " + std::to_string(number) +
                         " is out of range (0 to " +
                         std::to_string(kMaxWorkerCredentials - 1) + ")");
}

}  // namespace

StatusOr<RoleKeys> WorkerCredentialKeys(const RoleKeys& issuer,
                                        uint32_t number) {
  LS_RETURN_IF_ERROR(CheckNumber(number));
  LS_ASSIGN_OR_RETURN(std::string ticket_key, TicketKey(issuer));
  RoleKeys keys = issuer;
  keys.role = KeyRole::kWorker;
  keys.credential = number;
  std::string pub;
  Status derived = DeriveKeyPair(ticket_key, number, &pub, &keys.secret);
  OPENSSL_cleanse(ticket_key.data(), ticket_key.size());
  LS_RETURN_IF_ERROR(derived);
  keys.publics[static_cast<int>(KeyRole::kWorker)] = pub;
  return keys;
}

std::string WorkerCredentialFileName(uint32_t number) {
  return "worker-" + std::to_string(number) + ".key";
}

Status WriteWorkerCredential(const std::string& dir, uint32_t number) {
  LS_RETURN_IF_ERROR(CheckNumber(number));
  const std::string path = dir + "/" + WorkerCredentialFileName(number);
  if (std::filesystem::exists(path)) {
    return FailedPrecondition(path +
                              " exists: a credential given out is never "
                              "replaced (issue another number)");
  }
  LS_ASSIGN_OR_RETURN(
      RoleKeys issuer,
      LoadRoleKeys(dir + "/" + KeyFileName(KeyRole::kCoordinator)));
  LS_ASSIGN_OR_RETURN(RoleKeys keys, WorkerCredentialKeys(issuer, number));
  return WriteFileDurably(path, FormatRoleKeys(keys), 0600);
}

StatusOr<WorkerCredentialIndex> WorkerCredentialIndex::Create(
    const RoleKeys& keys) {
  LS_ASSIGN_OR_RETURN(std::string ticket_key, TicketKey(keys));
  return WorkerCredentialIndex(std::move(ticket_key));
}

std::optional<uint32_t> WorkerCredentialIndex::NumberOf(
    const std::string& key) {
  if (key.size() != kRawKeyBytes) return std::nullopt;
  if (numbers_.empty()) {
    numbers_.reserve(kMaxWorkerCredentials);
    for (uint32_t n = 0; n < kMaxWorkerCredentials; ++n) {
      std::string pub, secret;
      if (!DeriveKeyPair(ticket_key_, n, &pub, &secret).ok()) break;
      OPENSSL_cleanse(secret.data(), secret.size());
      std::string raw(kRawKeyBytes, '\0');
      zmq_z85_decode(reinterpret_cast<uint8_t*>(raw.data()), pub.c_str());
      numbers_.emplace(std::move(raw), n);
    }
  }
  const auto it = numbers_.find(key);
  if (it == numbers_.end()) return std::nullopt;
  return it->second;
}

}  // namespace lockstep
