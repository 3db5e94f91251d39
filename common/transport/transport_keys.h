// The job key this process speaks with on every plane: main installs it
// once, before the first socket, and the transports read it when they
// bind, connect or accept (CurveZMQ on ZeroMQ sockets, the direct
// transport's handshake). None installed: plaintext, as under
// --security off or between the threads of an in-process test.
// Thread-safety: install before any other thread uses a transport; reads
// are then safe from any thread.
#ifndef LOCKSTEP_COMMON_TRANSPORT_TRANSPORT_KEYS_H_
#define LOCKSTEP_COMMON_TRANSPORT_TRANSPORT_KEYS_H_

#include <memory>
#include <optional>

#include "common/security/fact_seal.h"
#include "common/security/job_keys.h"
#include "common/status.h"

namespace lockstep {

// How long a connection may take to authenticate before it is closed, on
// every plane: long enough for a loaded machine, short enough that idle
// connections from outside the job cannot pile up.
inline constexpr int kHandshakeDeadlineMs = 10000;

// Installs `keys` (nullopt: none) for the rest of the process.
void InstallTransportKeys(std::optional<RoleKeys> keys);
// Installs `keys` if this is the first call of a process that speaks
// with one key for good (a Python process's Workers: their sockets read
// the key as they connect); afterwards only checks that `keys` is the one
// installed. Errors: a different key (or none against a key).
Status KeepTransportKeys(std::optional<RoleKeys> keys);
// The installed key, or nullptr.
const RoleKeys* InstalledTransportKeys();
// The seal a server checks workers' admissions and verdicts with, made
// from the installed key (fact_seal.h). Null without keys. Errors: keys
// that cannot seal (a worker's or the admin's).
StatusOr<std::shared_ptr<const FactSeal>> InstalledFactSeal();

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_TRANSPORT_KEYS_H_
