#include "coordinator/message_router.h"

#include "common/clock.h"
#include "common/logging.h"

namespace lockstep {

void MessageRouter::Handle(Message& msg) {
  Status verified = VerifyHeader(&msg);
  if (!verified.ok()) {
    host_.RejectBadMessage(msg.peer, verified);
    return;
  }
  const wire::Envelope* env = msg.envelope;
  Peer* peer = c_.members.Find(msg.peer);
  if (Status allowed = c_.access.CheckMessage(msg.role, *env, peer != nullptr);
      !allowed.ok()) {
    return host_.RejectBadMessage(msg.peer, allowed);
  }
  // A Register and a tool's request for a snapshot round come from peers
  // that are not members (yet, or ever: lockstep-snapshot now talks to the
  // live job without joining it).
  if (env->body_type() == wire::Body::Register) {
    HandleRegister(msg.peer, *env->body_as_Register(), msg.credential);
    return;
  }
  if (env->body_type() == wire::Body::SnapshotStart &&
      env->sender_role() == wire::Role::Tool) {
    c_.rounds.HandleRoundRequest(msg.peer);
    return;
  }
  if (peer == nullptr && c_.liveness.HandleSideHeartbeat(msg.peer, *env)) {
    return;
  }
  // What a removed worker had in flight when it was removed: not an attack.
  if (peer == nullptr &&
      c_.members.RecentlyRemoved(msg.peer, env->sender_role(),
                                 env->sender_rank())) {
    return;
  }
  if (peer == nullptr) {
    HandleNonMember(msg.peer, *env);
    return;
  }
  peer->last_seen_ms = NowMillis();
  // A restoring server that speaks again is alive: from now on the normal
  // liveness limit applies to it, not the longer one of a restore.
  peer->restoring = false;
  // A preempted job admits and commits nothing more: its preemption round,
  // of the newest commit, holds every committed clock.
  if (c_.departures.preempting() &&
      (env->body_type() == wire::Body::Admit ||
       env->body_type() == wire::Body::ClockDone)) {
    return;
  }
  HandlePeerMessage(msg.peer, *peer, *env);
}

void MessageRouter::HandleNonMember(const std::string& id,
                                    const wire::Envelope& env) {
  if (!AccessControl::MemberMessage(env.body_type())) {
    host_.RejectBadMessage(
        id, FailedPrecondition(std::string(BodyName(env.body_type())) +
                               " is not for the coordinator"));
    return;
  }
  // Authenticated, so not an attack: most likely a role that outlived an
  // earlier coordinator process, which registers again when told.
  if (not_member_log_budget_-- > 0) {
    LS_LOG(Info) << BodyName(env.body_type()) << " from a "
                 << RoleName(env.sender_role()) << " (rank "
                 << env.sender_rank()
                 << ") that has not registered: told to register";
  }
  outbox_.Send(id, MakeErrorHeader(wire::ErrorCode::NotMember,
                                   std::string(BodyName(env.body_type())) +
                                       " from a peer that has not registered",
                                   0, wire::Role::Coordinator, 0));
}

void MessageRouter::HandleRegister(const std::string& id,
                                   const wire::Register& reg,
                                   int64_t credential) {
  if (c_.members.Find(id) != nullptr) return;  // a duplicate: already welcomed
  if (c_.bans.Banned(credential)) {
    c_.bans.CountRefusal();
    outbox_.Send(
        id, MakeErrorHeader(wire::ErrorCode::BadRequest,
                            "worker credential " + std::to_string(credential) +
                                " was removed from this job for its pushes and "
                                "may not register again",
                            0, wire::Role::Coordinator, 0));
    return;
  }
  if (reg.role() == wire::Role::Evaluator) {
    c_.enrollment.RegisterEvaluator(id, reg);
    return;
  }
  const bool is_server = reg.role() == wire::Role::Server;
  if (!is_server && reg.role() != wire::Role::Worker) {
    host_.RejectBadMessage(
        id, InvalidArgument("only servers, workers and an evaluator register"));
    return;
  }
  // Once training runs, a server registering can only take a lost (or
  // replaced) shard's place; the layout's shard count is fixed.
  if (is_server && c_.enrollment.training() &&
      !flatbuffers::GetString(reg.endpoint()).empty() &&
      c_.recovery.AcceptReturningServer(id, reg, c_.enrollment)) {
    return;
  }
  c_.enrollment.RegisterPeer(id, reg, credential);
}

void MessageRouter::HandleServerMessage(const std::string& id, Peer& peer,
                                        const wire::Envelope& env) {
  ReplicaFailover& failover = c_.recovery.failover();
  switch (env.body_type()) {
    case wire::Body::Committed:
      // A survivor's acks of clocks past the round it is rolling back to.
      if (c_.recovery.recovering()) return;
      return c_.clock.HandleCommitted(*env.body_as_Committed());
    case wire::Body::SnapshotDone:
      if (c_.recovery.recovering()) return;  // its round was abandoned
      return c_.rounds.HandleSnapshotDone(*env.body_as_SnapshotDone());
    case wire::Body::Restored:
      return c_.recovery.HandleRestored(peer, *env.body_as_Restored(),
                                        c_.enrollment);
    case wire::Body::PushRefused:
      return c_.refusals.Handle(peer.rank, *env.body_as_PushRefused());
    case wire::Body::BackupReady:
      if (peer.rank < 0) return;
      return failover.HandleBackupReady(static_cast<uint32_t>(peer.rank),
                                        env.body_as_BackupReady()->shard());
    case wire::Body::Promoted:
      return failover.HandlePromoted(id, *env.body_as_Promoted(),
                                     c_.enrollment.layout());
    default:
      return;
  }
}

void MessageRouter::HandlePeerMessage(const std::string& id, Peer& peer,
                                      const wire::Envelope& env) {
  const bool evaluator = peer.role == wire::Role::Evaluator;
  const bool worker = peer.role == wire::Role::Worker;
  const bool server = peer.role == wire::Role::Server;
  // Each body is taken only from the roles that may send it; anything else
  // falls out of the switch and is refused. An Admit, ClockDone or
  // Evaluation of an older recovery epoch (or sent during a recovery) is
  // dropped without an Error: the recovery's end sends its sender a new
  // Start, and it carries on in the new epoch.
  switch (env.body_type()) {
    case wire::Body::Heartbeat:
      return c_.liveness.ReplyHeartbeat(id);
    case wire::Body::Describe:
      if (!worker && !evaluator) break;
      return c_.enrollment.HandleDescribe(id, peer, *env.body_as_Describe());
    case wire::Body::Admit:
      if (!worker && !evaluator) break;
      if (!c_.recovery.CurrentEpoch(peer, env.body_as_Admit()->epoch())) return;
      return HandleAdmit(id, peer, env.body_as_Admit()->clock());
    case wire::Body::ClockDone:
      if (!worker) break;
      if (!c_.recovery.CurrentEpoch(peer, env.body_as_ClockDone()->epoch())) {
        return;
      }
      return c_.clock.HandleClockDone(peer, *env.body_as_ClockDone());
    case wire::Body::Evaluation:
      if (!worker && !evaluator) break;
      if (!c_.recovery.CurrentEpoch(peer, env.body_as_Evaluation()->epoch())) {
        return;
      }
      return c_.clock.evaluation().HandleEvaluation(id,
                                                    *env.body_as_Evaluation());
    case wire::Body::Committed:
    case wire::Body::SnapshotDone:
    case wire::Body::Restored:
    case wire::Body::PushRefused:
    case wire::Body::BackupReady:
    case wire::Body::Promoted:
      if (!server) break;
      return HandleServerMessage(id, peer, env);
    case wire::Body::Error:
      return HandleError(id, peer, *env.body_as_Error());
    case wire::Body::Leave:
      return c_.departures.HandleLeave(
          id, peer, flatbuffers::GetString(env.body_as_Leave()->reason()));
    default:
      break;
  }
  host_.RejectBadMessage(id, InvalidArgument(std::string("unexpected ") +
                                             BodyName(env.body_type()) +
                                             " from " + RoleName(peer.role)));
}

void MessageRouter::HandleAdmit(const std::string& id, Peer& peer,
                                int64_t clock) {
  if (!c_.enrollment.training() || clock < 0) {
    host_.RejectBadMessage(id, FailedPrecondition("admission before training"));
    return;
  }
  c_.clock.HandleAdmit(id, peer, clock);
}

void MessageRouter::HandleError(const std::string& id, Peer& peer,
                                const wire::Error& err) {
  const std::string text = flatbuffers::GetString(err.message());
  const bool worker = peer.role == wire::Role::Worker;
  if ((worker || peer.role == wire::Role::Evaluator) && !peer.started) {
    return c_.enrollment.HandleWorkerError(id, peer, err.code(), text);
  }
  // A server that cannot restore its round waits after saying so: a
  // damaged round is marked failed and an older one is tried, or the job
  // ends; a round of another job is left as it is, and the job ends.
  if (!worker && err.code() == wire::ErrorCode::RestoreFailed) {
    return c_.recovery.HandleRestoreFailed(peer.rank, err.request_id(), text,
                                           c_.enrollment);
  }
  if (!worker && (err.code() == wire::ErrorCode::RoundIncompatible ||
                  err.code() == wire::ErrorCode::RoundUnreadable)) {
    return c_.recovery.HandleRoundNotRestored(peer.rank, err.request_id(),
                                              err.code(), text);
  }
  if (peer.role == wire::Role::Server &&
      err.code() == wire::ErrorCode::PrimaryLost) {
    return c_.recovery.HandlePrimaryLost(
        static_cast<uint32_t>(err.request_id()),
        flatbuffers::GetString(err.about()), text, c_.enrollment);
  }
  // Any other error of a running peer changes nothing by itself: if the
  // peer cannot go on, its silence is what liveness acts on.
  LS_LOG(Warning) << RoleName(peer.role) << " " << peer.rank
                  << " reported an error: " << text;
}

}  // namespace lockstep
