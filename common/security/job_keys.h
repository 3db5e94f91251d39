// A job's key material: what lets a process take part in the job, one file
// per role (coordinator, server, worker, admin), made together by the
// launcher or `lockstep-keys` (docs/operations.md#security).
//
// Each role's file holds that role's CurveZMQ secret key, every role's
// public key (to know whom a connection comes from, and whom it goes to)
// and the data plane's mode. A worker's file therefore cannot speak as a
// server or the admin: only the admin key may ask for a snapshot round,
// only a server key may register a shard, and only the coordinator's and
// a server's compute the tickets that name a data-plane peer
// (peer_ticket.h).
//
// The file is text, one "name value" pair a line (a line starting with
// '#' is a comment):
//   role worker
//   data-plane auth            (auth or aead)
//   secret <40 Z85 chars>      (this role's CurveZMQ secret key)
//   public-coordinator <Z85>   (and public-server, -worker, -admin)
//   credential <N>             (a worker credential's file only:
//                               worker_credentials.h)
// Loading refuses a file that anyone but its owner and group may read, or
// anyone but its owner may write (a Kubernetes Secret is mounted 0440 for
// the pod's own group); the open file is checked, then read.
// Thread-safety: RoleKeys is a value; the functions are reentrant.
#ifndef LOCKSTEP_COMMON_SECURITY_JOB_KEYS_H_
#define LOCKSTEP_COMMON_SECURITY_JOB_KEYS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace lockstep {

enum class KeyRole { kCoordinator = 0, kServer, kWorker, kAdmin };
inline constexpr int kKeyRoles = 4;

// How the data plane (workers' connections to servers) is protected once
// the client proved its ticket and the server the ticket key
// (transport/stream/handshake.h): `auth` leaves the records in the clear;
// `aead` seals every record (AES-256-GCM under keys of that connection alone,
// stream/record_cipher.h).
enum class DataSecurity { kAuth, kAead };

// "coordinator", "server", "worker", "admin"; the file "<name>.key".
const char* KeyRoleName(KeyRole role);
StatusOr<KeyRole> ParseKeyRole(const std::string& name);
std::string KeyFileName(KeyRole role);
const char* DataSecurityName(DataSecurity mode);
StatusOr<DataSecurity> ParseDataSecurity(const std::string& name);

struct RoleKeys {
  KeyRole role = KeyRole::kWorker;
  DataSecurity data_plane = DataSecurity::kAuth;
  std::string secret;                          // Z85, 40 characters
  std::array<std::string, kKeyRoles> publics;  // Z85, by KeyRole
  // A worker credential's number (its own key pair, worker_credentials.h);
  // -1 for a role's shared key.
  int64_t credential = -1;

  const std::string& public_key(KeyRole r) const {
    return publics[static_cast<int>(r)];
  }
  // The role whose public key is the 32 raw bytes `key`, if any.
  std::optional<KeyRole> RoleOfPublicKey(const std::string& key) const;
};

// Reads and checks a role's key file. Errors name the file and what is
// wrong (unreadable, readable by others, a missing or malformed line), never
// a key.
StatusOr<RoleKeys> LoadRoleKeys(const std::string& path);
// The file's text for `keys`.
std::string FormatRoleKeys(const RoleKeys& keys);

// Whether a job's workers share worker.key, or each holds a credential of
// its own (worker_credentials.h: no worker.key is written).
enum class WorkerKeys { kShared, kCredentials };

// Makes a fresh job's keys and writes the role files into `dir` (created
// with mode 0700 when missing; files 0600, written durably): four, or
// three under kCredentials (the shared worker key's secret is dropped:
// nobody holds it). Errors: `dir` unusable, or it already holds key files
// (never overwritten: a running job would lose its keys).
Status WriteJobKeys(const std::string& dir, DataSecurity data_plane,
                    WorkerKeys workers = WorkerKeys::kShared);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_SECURITY_JOB_KEYS_H_
