#include "coordinator/faults/departures.h"

#include <algorithm>

#include "common/clock.h"
#include "common/logging.h"
#include "common/termination.h"

namespace lockstep {

void Departures::Preempt(const std::string& why) {
  if (preempting_) return;
  preempting_ = true;
  why_ = why;
  deadline_ms_ = NowMillis() + kPreemptionRoundMs;
  no_round_ = enrollment_.training() ? rounds_.StartPreemptionRound()
                                     : "training had not started";
  round_asked_ = no_round_.empty();
  LS_LOG(Warning) << "job preempted: " << why
                  << (round_asked_ ? "; taking a snapshot round now"
                                   : "; no snapshot round: " + no_round_);
}

void Departures::HandleLeave(const std::string& id, const Peer& peer,
                             const std::string& reason) {
  const std::string who =
      std::string(peer.role == wire::Role::Server   ? "server "
                  : peer.role == wire::Role::Worker ? "worker "
                                                    : "evaluator ") +
      std::to_string(peer.rank);
  LS_LOG(Info) << who << " is being terminated: " << reason;
  // Terminated peers of a preempted job wait for its Shutdown.
  if (preempting_) return;
  if (peer.role == wire::Role::Server) {
    Preempt(who + " is being terminated (" + reason + ")");
  } else if (!enrollment_.training()) {
    // Nothing is lost: a job whose peers go before training starts again.
    Preempt(who + " is being terminated before training (" + reason + ")");
  } else {
    leavers_[id] = {NowMillis() + settle_ms_, reason};
  }
}

std::optional<Departures::Ending> Departures::Tick() {
  if (!preempting_) SettleLeavers();
  if (!preempting_) return std::nullopt;
  const auto& result = rounds_.preemption_result();
  if (round_asked_ && !result && NowMillis() < deadline_ms_) {
    return std::nullopt;
  }
  return PreemptedEnding(result);
}

void Departures::SettleLeavers() {
  if (leavers_.empty()) return;
  const int64_t now = NowMillis();
  const auto& workers = members_.worker_ids();
  const bool none_left =
      std::all_of(workers.begin(), workers.end(),
                  [&](const std::string& w) { return leavers_.count(w) > 0; });
  for (auto it = leavers_.begin(); it != leavers_.end();) {
    if (it->second.first > now) {
      ++it;
      continue;
    }
    const std::string id = it->first;
    const std::string why = "left the job: " + it->second.second;
    const bool evaluator = id == members_.evaluator_id();
    // Every worker going is the whole job being terminated (a Slurm job's
    // tasks whose coordinator has not heard its SIGTERM yet).
    if (!evaluator && none_left) {
      Preempt("every worker is being terminated");
      return;
    }
    it = leavers_.erase(it);
    if (evaluator) {
      enrollment_.RemoveEvaluator(id, why);
    } else if (members_.peers().count(id) > 0) {
      enrollment_.RemoveWorker(id, why);
    } else {
      continue;  // removed meanwhile (declared dead): nobody to tell
    }
    outbox_.Send(id, MakeShutdownHeader(wire::ShutdownKind::Released, why));
  }
}

Departures::Ending Departures::PreemptedEnding(
    const std::optional<ManifestRound>& round) const {
  Ending end;
  const std::string base = "job preempted (" + why_ + ")";
  if (round && round->complete) {
    end.reason = base + ": snapshot round " + std::to_string(round->round) +
                 " (clock " + std::to_string(round->clock) +
                 ") is durable; the job resumes from it";
    return end;
  }
  const std::string cause =
      !no_round_.empty() ? "no round now: " + no_round_
      : round            ? "its round failed: " + round->error
                         : "its round was not durable within " +
                    std::to_string(kPreemptionRoundMs / 1000) + " s";
  if (const ManifestRound* latest = rounds_.LatestComplete()) {
    end.reason = base + "; " + cause + "; the job resumes from round " +
                 std::to_string(latest->round) + " (clock " +
                 std::to_string(latest->clock) + ")";
  } else if (!enrollment_.training()) {
    end.reason = base + "; nothing was trained yet: the job starts again";
  } else if (job_.snapshot_dir.empty()) {
    end.kind = wire::ShutdownKind::Aborted;
    end.reason = base + "; this job has no --snapshot-dir, so it cannot resume";
  } else {
    end.reason = base + "; " + cause + "; no round is complete: the job " +
                 "starts again from the beginning";
  }
  return end;
}

}  // namespace lockstep
