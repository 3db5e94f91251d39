#include "coordinator/enrollment/access_control.h"

#include "common/transport/zmq/zap_handler.h"
#include "coordinator/state/run_recorder.h"

namespace lockstep {
namespace {

// The key a peer of `role` holds: servers the server key, workers and the
// evaluator the worker key.
const char* KeyOf(wire::Role role) {
  return role == wire::Role::Server ? "server" : "worker";
}

}  // namespace

Status AccessControl::Check(const std::string& key_role, const char* needed,
                            const std::string& what) {
  if (!authenticated_ || key_role == needed) return Status::Ok();
  ++unauthorized_;
  return FailedPrecondition(
      what + " needs the job's " + needed + " key; this connection holds the " +
      (key_role.empty() ? std::string("no") : key_role) + " key");
}

Status AccessControl::CheckMessage(const std::string& key_role,
                                   const wire::Envelope& env,
                                   bool from_member) {
  LS_RETURN_IF_ERROR(CheckAuthenticated(key_role));
  switch (env.body_type()) {
    case wire::Body::Register:
      return CheckRegister(key_role, env.body_as_Register()->role());
    case wire::Body::SnapshotStart:
      if (env.sender_role() != wire::Role::Tool) return Status::Ok();
      return CheckRoundRequest(key_role);
    case wire::Body::Heartbeat:
      if (from_member) return Status::Ok();
      return CheckSideHeartbeat(key_role, env.sender_role());
    default:
      return Status::Ok();
  }
}

Status AccessControl::CheckAuthenticated(const std::string& key_role) {
  if (!authenticated_ || !key_role.empty()) return Status::Ok();
  ++unauthorized_;
  return FailedPrecondition("a message from a connection without a job key");
}

Status AccessControl::CheckRegister(const std::string& key_role,
                                    wire::Role role) {
  return Check(key_role, KeyOf(role),
               std::string("registering as ") + RoleName(role));
}

Status AccessControl::CheckSideHeartbeat(const std::string& key_role,
                                         wire::Role role) {
  return Check(key_role, KeyOf(role),
               std::string("a heartbeat for a ") + RoleName(role));
}

Status AccessControl::CheckRoundRequest(const std::string& key_role) {
  return Check(key_role, "admin", "asking for a snapshot round");
}

void AccessControl::AddMetrics(PrometheusText* text) const {
  text->Add("lockstep_unauthorized_requests_total",
            static_cast<double>(unauthorized_));
  text->Add("lockstep_refused_connections_total{plane=\"control\"}",
            static_cast<double>(RefusedConnections()));
}

bool AccessControl::MemberMessage(wire::Body body) {
  switch (body) {
    case wire::Body::Heartbeat:
    case wire::Body::Admit:
    case wire::Body::ClockDone:
    case wire::Body::Committed:
    case wire::Body::Evaluation:
    case wire::Body::SnapshotDone:
    case wire::Body::Error:
    case wire::Body::Describe:
    case wire::Body::Restored:
    case wire::Body::Leave:
    case wire::Body::PushRefused:
    case wire::Body::Promoted:
    case wire::Body::BackupReady:
      return true;
    default:
      return false;
  }
}

}  // namespace lockstep
