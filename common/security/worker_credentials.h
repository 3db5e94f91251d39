// Worker credentials: one CurveZMQ key pair per worker process, so that a
// worker removed for what it pushed cannot register again with what it
// holds. With a shared worker key (worker.key) every worker process proves
// the same thing, and one removed for poison is a new member as soon as it
// registers again; with credentials (`lockstep-keys --worker-credentials
// N`, `--issue-worker N`) each worker's file holds a key pair of its own,
// numbered, and the coordinator refuses a credential it removed a worker
// of (coordinator/faults/credential_bans.h).
//
// Credential N's secret key is HMAC-SHA256 of its number under the job's
// ticket key (peer_ticket.h), which only the coordinator's and a server's
// keys compute: they tell a credential's public key from any other without
// a list, a worker's file cannot make another's, and new ones can be
// issued to a running job (from coordinator.key) without restarting it.
// The ZAP handler names a credential's connection "worker/N" (User-Id),
// which a ZeroMQ socket hands on as Message::role "worker" and
// Message::credential N.
// Thread-safety: functions are reentrant; a WorkerCredentialIndex is used
// by one thread.
#ifndef LOCKSTEP_COMMON_SECURITY_WORKER_CREDENTIALS_H_
#define LOCKSTEP_COMMON_SECURITY_WORKER_CREDENTIALS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/security/job_keys.h"
#include "common/status.h"

namespace lockstep {

// Credentials are numbered 0 .. kMaxWorkerCredentials - 1.
inline constexpr uint32_t kMaxWorkerCredentials = 4096;

// The worker key file of credential `number`, made from a coordinator's or
// a server's keys `issuer`: role worker, its own key pair (also its
// public-worker line), every other role's public key. Errors: `issuer`
// cannot compute the ticket key (a worker or admin key), or `number` is
// out of range.
StatusOr<RoleKeys> WorkerCredentialKeys(const RoleKeys& issuer,
                                        uint32_t number);

// Writes credential `number`'s file "worker-<number>.key" into `dir`,
// made from `dir`/coordinator.key (mode 0600, written durably). Errors:
// no readable coordinator key there, the number out of range, or the file
// exists (a credential given out is never replaced).
Status WriteWorkerCredential(const std::string& dir, uint32_t number);
// "worker-<number>.key".
std::string WorkerCredentialFileName(uint32_t number);

// Which credential a client's public key is, for a process holding a
// coordinator's or a server's keys.
class WorkerCredentialIndex {
 public:
  // Errors: WorkerCredentialKeys's for `keys`.
  static StatusOr<WorkerCredentialIndex> Create(const RoleKeys& keys);

  // The number of the credential whose public key is `key` (32 raw
  // bytes), if any. The first call derives every credential's public key
  // (about 50 ms per thousand).
  std::optional<uint32_t> NumberOf(const std::string& key);

 private:
  explicit WorkerCredentialIndex(std::string ticket_key)
      : ticket_key_(std::move(ticket_key)) {}

  std::string ticket_key_;
  std::unordered_map<std::string, uint32_t> numbers_;  // raw public -> N
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_SECURITY_WORKER_CREDENTIALS_H_
