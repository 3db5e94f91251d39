#include "coordinator/faults/liveness.h"

#include "common/clock.h"
#include "common/logging.h"

namespace lockstep {

void Liveness::ReplyHeartbeat(const std::string& id) {
  outbox_.Send(id, MakeHeartbeatHeader(recorder_.last_committed(),
                                       wire::Role::Coordinator, 0));
}

bool Liveness::HandleSideHeartbeat(const std::string& id,
                                   const wire::Envelope& env) {
  if (env.body_type() != wire::Body::Heartbeat) return false;
  Peer* owner = members_.FindByRank(env.sender_role(), env.sender_rank());
  if (owner == nullptr) return false;
  if (!tickets_.Vouches(env.sender_role(), env.sender_rank(),
                        *env.body_as_Heartbeat())) {
    if (refused_heartbeats_++ < 10) {
      LS_LOG(Warning) << "a heartbeat for "
                      << (env.sender_role() == wire::Role::Evaluator
                              ? "evaluator "
                              : "worker ")
                      << env.sender_rank()
                      << " without that rank's ticket: not counted";
    }
    return true;
  }
  owner->last_seen_ms = NowMillis();
  ReplyHeartbeat(id);
  return true;
}

Status Liveness::Check(Enrollment& enrollment, Recovery& recovery) {
  const int64_t now = NowMillis();
  if (last_check_ms_ > 0 && now - last_check_ms_ > dead_after_ms_ / 2) {
    LS_LOG(Warning) << "the coordinator did not run for "
                    << now - last_check_ms_
                    << " ms: every peer's silence counts from now";
    members_.HeardFromAll(now);
  }
  last_check_ms_ = now;
  const SilentPeers silent =
      members_.FindSilent(now, dead_after_ms_, register_timeout_ms_);
  if (!silent.evaluator.empty()) {
    enrollment.RemoveEvaluator(std::string(members_.evaluator_id()),
                               silent.evaluator);
  }
  // A lost server's part of the model comes back from the latest complete
  // snapshot round (recovery.h), or the job ends.
  for (const auto& [id, why] : silent.servers) {
    recovery.LoseServer(id, why, enrollment);
  }
  for (const auto& [id, why] : silent.workers) {
    enrollment.RemoveWorker(id, why);
  }
  // A recovery that outlived the registration timeout ends the job here.
  return recovery.CheckDeadline();
}

}  // namespace lockstep
