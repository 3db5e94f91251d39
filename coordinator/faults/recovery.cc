#include "coordinator/faults/recovery.h"

#include "common/clock.h"
#include "common/logging.h"

namespace lockstep {

bool Recovery::CurrentEpoch(const Peer& peer, uint32_t epoch) const {
  // During a recovery nothing counts, not even the new epoch's: the clocks
  // after the round are being undone, and the policy that would learn from
  // a report is replaced when the recovery finishes (ClockDriver::Restart).
  if (!recovering_ && epoch == epoch_.value()) return true;
  LS_LOG(Debug) << "ignored a report of worker " << peer.rank
                << " from recovery epoch " << epoch << " (now "
                << epoch_.value() << (recovering_ ? ", recovering)" : ")");
  return false;
}

void Recovery::LogFirstCommitAfterRecovery(int64_t clock) {
  failover_.LogFirstCommit(clock);
  if (!first_commit_pending_) return;
  first_commit_pending_ = false;
  LS_LOG(Warning) << "first commit after the recovery: clock " << clock << ", "
                  << NowSeconds() - started_s_
                  << " s after the server was lost";
}

Status Recovery::CheckDeadline() const {
  if (!recovering_ || NowSeconds() - started_s_ <= deadline_s_) {
    return Status::Ok();
  }
  std::string missing;
  for (size_t k = 0; k < members_.server_ids().size(); ++k) {
    if (restored_.count(static_cast<int>(k)) != 0) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(k);
  }
  return DeadlineExceeded("recovery did not finish within " +
                          std::to_string(deadline_s_) + " s: server(s) " +
                          missing + " did not come back or restore");
}

void Recovery::LoseServer(const std::string& id, const std::string& why,
                          Enrollment& enrollment) {
  const Peer gone = members_.RemoveServer(id);
  const std::string what =
      "server " + std::to_string(gone.rank) + " on " + gone.host + " " + why;
  const bool training = enrollment.training();
  if (training && job_.replicas > 0 && !recovering_ && gone.rank >= 0 &&
      failover_.Promote(static_cast<uint32_t>(gone.rank), what,
                        enrollment.layout())) {
    // Fenced: should it still run (a broken connection, not a death), it
    // stops instead of serving a shard that is served elsewhere.
    failover_.Fence(id, what);
    return;
  }
  const bool snapshots = !job_.snapshot_dir.empty();
  const ManifestRound* latest =
      training && snapshots ? rounds_.LatestComplete() : nullptr;
  if (latest == nullptr) {
    const std::string missing =
        !training ? "before training started"
        : snapshots
            ? "and no snapshot round is complete yet"
            : "and the job takes no snapshots (--snapshot-every-clocks)";
    const Status lost = Unavailable(what + " " + missing +
                                    ", so its part of the model is lost");
    LS_LOG(Error) << lost.message();
    host_.Abort(lost);
    return;
  }
  // A copy: recording the abandoned round below changes the manifest.
  const ManifestRound round = *latest;
  // A second loss during a recovery restarts it, but its deadline and the
  // time it reports still count from the first loss.
  if (!recovering_) started_s_ = NowSeconds();
  recovering_ = true;  // no round starts for a tool's request meanwhile
  rounds_.AbandonForLoss("server " + std::to_string(gone.rank) + " was lost");
  ++recoveries_;
  BeginRollback(round, what, enrollment);
}

void Recovery::HandlePrimaryLost(uint32_t shard, const std::string& primary,
                                 const std::string& why,
                                 Enrollment& enrollment) {
  if (job_.replicas == 0 || !enrollment.training() || recovering_ ||
      clock_.evaluation().training_over() ||
      shard >= members_.server_ids().size()) {
    return;
  }
  const uint32_t slot = failover_.placement().PrimarySlot(shard);
  const std::string id = members_.server_ids()[slot];
  // Lost already, or the shard was promoted since the feed was made.
  if (id.empty() || members_.at(id).endpoint != primary) return;
  LoseServer(id, "is gone for its backup (" + why + ")", enrollment);
}

void Recovery::BeginRollback(const ManifestRound& round, const std::string& why,
                             Enrollment& enrollment) {
  // Every shard rolls back, not only the lost one: its part can only come
  // from the round, and the others must go back to that round with it.
  // The epoch goes up before the Welcomes carry it, so a Restored of an
  // earlier rollback (HandleRestored) and the old timeline's reports never
  // count.
  rounds_.BeginRollback(round);
  // Every shard back on its own slot (a promoted backup's range goes back
  // to its slot's server, a replacement's once it registers).
  failover_.Reset();
  for (size_t k = 0; k < members_.server_ids().size(); ++k) {
    const std::string& id = members_.server_ids()[k];
    if (!id.empty())
      enrollment.layout().set_endpoint(k, members_.at(id).endpoint);
  }
  epoch_.Advance();
  recovering_ = true;
  restored_.clear();
  LS_LOG(Warning) << why << "; rolling every shard back to snapshot round "
                  << round.round << " (clock " << round.clock
                  << "), recovery epoch " << epoch_.value();
  // A lost shard's slot is empty: its replacement gets the same round and
  // epoch when it registers (AcceptReturningServer).
  for (const auto& server : members_.server_ids()) {
    if (!server.empty()) enrollment.SendWelcome(server, members_.at(server));
  }
}

void Recovery::HandleRestoreFailed(int shard, uint64_t round,
                                   const std::string& why,
                                   Enrollment& enrollment) {
  RestoreFailure failure = rounds_.HandleRestoreFailed(shard, round, why);
  if (failure.ignored) return;
  if (failure.previous) {
    // At start-up (a resume's round is damaged) the recovery begins here.
    if (!recovering_) started_s_ = NowSeconds();
    BeginRollback(*failure.previous,
                  "snapshot round " + std::to_string(round) +
                      " cannot be restored (" + why + "); it is marked failed",
                  enrollment);
    return;
  }
  host_.Abort(std::move(failure.abort));
}

void Recovery::HandleRoundNotRestored(int shard, uint64_t round,
                                      wire::ErrorCode code,
                                      const std::string& why) {
  if (!rounds_.Restoring(round)) return;
  const std::string what =
      code == wire::ErrorCode::RoundIncompatible
          ? "; the round is intact (lockstep-snapshot verify), but this job "
            "is not the one it was taken of: resume with that job's "
            "--model, --optimizer and --data"
          : "; nothing is marked failed: make the snapshot folder readable "
            "by every server (one machine, or a shared file system), or "
            "resume from another round (--resume-round)";
  host_.Abort(FailedPrecondition("server " + std::to_string(shard) + ": " +
                                 why + what));
}

bool Recovery::AcceptReturningServer(const std::string& id,
                                     const wire::Register& reg,
                                     Enrollment& enrollment) {
  const int slot = members_.ServerSlotFor(reg.rank_hint());
  if (slot < 0) return false;
  if (!members_.server_ids()[slot].empty()) {
    // A new process for a shard that looks alive: the old one is gone (a
    // supervisor restarts a server faster than it is declared dead).
    LoseServer(std::string(members_.server_ids()[slot]),
               "was replaced by a new server process", enrollment);
    if (host_.aborted()) return true;
  }
  // Its slot's shard is served by a promoted backup: it holds backups,
  // copied live from their primaries.
  const bool rebuild = failover_.Moved() && !recovering_;
  Peer peer;
  peer.role = wire::Role::Server;
  peer.rank = slot;
  peer.rank_hint = reg.rank_hint();
  peer.endpoint = flatbuffers::GetString(reg.endpoint());
  peer.host = flatbuffers::GetString(reg.host());
  // The layout names the new endpoint before anything carries it: this
  // Welcome, and the workers' Starts when the recovery finishes.
  members_.PlaceServer(slot, id, peer);
  if (rebuild) {
    const std::vector<uint32_t> shards =
        failover_.AddBackupsOn(static_cast<uint32_t>(slot));
    LS_LOG(Warning) << "server " << slot << " is back from " << peer.host
                    << " pid " << reg.pid() << " at " << peer.endpoint
                    << " and rebuilds " << shards.size()
                    << " backups from live copies; nothing rolls back";
  } else {
    enrollment.layout().set_endpoint(slot, peer.endpoint);
    LS_LOG(Warning) << "server " << slot << " is back from " << peer.host
                    << " pid " << reg.pid() << " at " << peer.endpoint;
  }
  enrollment.SendWelcome(id, members_.at(id));
  // The primaries of the shards it holds backups of stream to it too.
  failover_.TellPrimariesOfBackupsOn(static_cast<uint32_t>(slot));
  return true;
}

void Recovery::HandleRestored(const Peer& peer, const wire::Restored& restored,
                              Enrollment& enrollment) {
  if (!recovering_ || restored.epoch() != epoch_.value()) return;
  // Counted by slot: the recovery waits for every shard of the layout,
  // including a lost one's replacement, not for the servers alive now.
  restored_.insert(peer.rank);
  LS_LOG(Info) << "server " << peer.rank << " restored round "
               << restored.round() << " (" << restored_.size() << "/"
               << members_.server_ids().size() << ")";
  if (restored_.size() == members_.server_ids().size()) {
    FinishRecovery(enrollment);
  }
}

void Recovery::FinishRecovery(Enrollment& enrollment) {
  const ManifestRound& round = *rounds_.restore();
  const int64_t clock = round.clock + 1;
  // The policy restarts before any Start is sent, so each Start carries
  // the round's clock + 1.
  const Status restarted = clock_.Restart(round);
  if (!restarted.ok()) {
    host_.Abort(restarted.WithContext("recovery"));
    return;
  }
  rounds_.FinishRollback();
  recovering_ = false;
  Peer* evaluator = members_.evaluator();
  if (evaluator != nullptr && evaluator->started) {
    // The evaluator reads the points of the new timeline.
    evaluator->pending_admit.reset();
    enrollment.SendStart(members_.evaluator_id(), *evaluator);
  }
  for (const auto& id : members_.worker_ids()) {
    // Whatever a worker had of the old timeline is void: an Admit waiting
    // for an answer, or being told the job was over (the clocks after the
    // round run again).
    Peer& peer = members_.at(id);
    peer.finished = false;
    peer.pending_admit.reset();
    peer.clock = -1;
    if (!peer.started) continue;  // its Start comes once it describes
    clock_.Join(peer, clock);
    enrollment.SendStart(id, peer);
  }
  first_commit_pending_ = true;
  LS_LOG(Warning) << "recovered in " << NowSeconds() - started_s_
                  << " s: every shard holds snapshot round " << round.round
                  << "; training continues at clock " << clock
                  << " (recovery epoch " << epoch_.value() << ")";
}

}  // namespace lockstep
