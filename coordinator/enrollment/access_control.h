// Who may ask the coordinator for what, by the job key each connection
// proved it holds (its role, named by the ZAP handler: zap_handler.h).
// Only a server key registers a server, only a worker key a worker or the
// evaluator, and only the admin key (lockstep-snapshot now, an operator)
// asks for a snapshot round. Once registered, a peer's messages are taken
// only from the role it registered as (Coordinator::Impl::
// HandlePeerMessage). Without job keys (--security off) nothing is
// authenticated and every request passes.
// Thread-safety: the coordinator's thread only.
#ifndef LOCKSTEP_COORDINATOR_ENROLLMENT_ACCESS_CONTROL_H_
#define LOCKSTEP_COORDINATOR_ENROLLMENT_ACCESS_CONTROL_H_

#include <cstdint>
#include <string>

#include "common/http/prometheus_text.h"
#include "common/status.h"
#include "common/transport/zmq/handshake_watch.h"
#include "common/wire/message.h"

namespace lockstep {

class AccessControl {
 public:
  // `authenticated`: the coordinator's socket admits only the job's keys.
  explicit AccessControl(bool authenticated) : authenticated_(authenticated) {}

  // Everything below for one message, before it is looked at further: any
  // message needs a job key; a Register its role's key, a tool's round
  // request the admin key, a heartbeat from a socket that is not a
  // member's (`from_member` false) its owner's role key. Errors (counted):
  // the first check that fails.
  Status CheckMessage(const std::string& key_role, const wire::Envelope& env,
                      bool from_member);
  // Did the connection prove it holds a job key at all? (Under CURVE it
  // always has; this guards against a socket that was not.) Errors
  // (counted): it did not.
  Status CheckAuthenticated(const std::string& key_role);
  // May a connection holding `key_role`'s key register as `role`?
  // Errors (counted): it may not.
  Status CheckRegister(const std::string& key_role, wire::Role role);
  // May it keep `role`'s member alive from a socket of its own (a worker's
  // heartbeat thread)? Errors (counted): it may not.
  Status CheckSideHeartbeat(const std::string& key_role, wire::Role role);
  // May it ask for a snapshot round? Errors (counted): it may not.
  Status CheckRoundRequest(const std::string& key_role);
  // Whether a registered server, worker or evaluator sends the
  // coordinator messages of this kind: from a peer that is not (or no
  // longer) a member, such a message is answered NotMember (a role of an
  // earlier coordinator process registers again); any other is bad.
  static bool MemberMessage(wire::Body body);

  // lockstep_unauthorized_requests_total and
  // lockstep_refused_connections_total{plane="control"}.
  void AddMetrics(PrometheusText* text) const;
  uint64_t unauthorized() const { return unauthorized_; }
  // The control plane's failed handshakes are counted by `watch` (keys the
  // ZAP handler refused, another job's keys, peers that broke off or do
  // not speak CurveZMQ). REQUIRES: it outlives this.
  void WatchHandshakes(const HandshakeWatch* watch) { handshakes_ = watch; }
  // Connections refused at the handshake so far.
  uint64_t RefusedConnections() const {
    return handshakes_ != nullptr ? handshakes_->failed_handshakes() : 0;
  }

 private:
  Status Check(const std::string& key_role, const char* needed,
               const std::string& what);

  const bool authenticated_;
  uint64_t unauthorized_ = 0;
  const HandshakeWatch* handshakes_ = nullptr;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_ENROLLMENT_ACCESS_CONTROL_H_
