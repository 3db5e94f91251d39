// The process's ZeroMQ authentication handler (ZAP, RFC 27): a CURVE
// server socket without one would accept any client that knows its public
// key. It admits a connection only when the client's public key is one of
// the job's and its role may use the socket's plane - the control plane
// (the coordinator's socket) takes servers, workers and the admin, a
// server's ZeroMQ data port takes workers - and names the role as the
// connection's User-Id, which ReceiveMessage hands on as Message::role. A
// worker credential (security/worker_credentials.h) is named
// "worker/<number>": Message::role "worker", Message::credential <number>.
// Thread-safety: the functions may be called from any thread; the handler
// runs on a thread of its own.
#ifndef LOCKSTEP_COMMON_TRANSPORT_ZMQ_ZAP_HANDLER_H_
#define LOCKSTEP_COMMON_TRANSPORT_ZMQ_ZAP_HANDLER_H_

#include <cstdint>
#include <string>

#include "common/security/job_keys.h"
#include "common/status.h"

namespace lockstep {

// The ZAP domains of Lockstep's two kinds of CURVE server socket.
inline constexpr const char* kControlPlaneDomain = "lockstep-control";
inline constexpr const char* kDataPlaneDomain = "lockstep-data";

// Whether a peer holding `role`'s key may connect to a socket of `domain`.
bool ZapAdmits(const std::string& domain, KeyRole role);

// Starts the handler for `keys` on the process context (once; later calls
// only replace the keys); returns when it is bound, so a CURVE socket bound
// afterwards is never unguarded.
Status EnsureZapHandler(const RoleKeys& keys);
// Stops the handler (before the process context closes).
void StopZapHandler();

// Connections the handler refused (an unknown key, or a role the plane
// does not take) since the process started.
uint64_t ZapRefusals();

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_ZMQ_ZAP_HANDLER_H_
