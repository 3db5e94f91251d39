// Coordinator: recovery from a lost server. The model lives only on the
// servers, so a shard that dies takes its part with it: every shard rolls
// back to the latest complete snapshot round and the job continues at that
// round's clock + 1, whatever the policy.
//
//  1. A server is lost: silent past the liveness limit, or a new server
//     process registers for its shard (a supervisor restarted it before it
//     was noticed). The recovery epoch goes up; the round in flight is
//     abandoned (recorded failed); every surviving server is welcomed again
//     with the round to restore and the new epoch; workers' admissions and
//     reports wait (and those of the old epoch never count).
//  2. The replacement registers (lockstep-launch --supervise restarts it;
//     an orchestrator or a person can too): it takes the lost shard's rank
//     and is welcomed with the same round and epoch.
//  3. Every server answers Restored for the epoch: a new policy continues
//     at clock + 1 from the state the round holds, with the live workers,
//     and every worker gets a Start (the layout with the new endpoint, the
//     epoch, the clock).
//
// No complete round, no snapshots, or no replacement within the
// registration timeout: the job ends, saying which and why.
#include <algorithm>

#include "common/logging.h"
#include "coordinator/coordinator.h"
#include "sync_policies/policy_registry.h"

namespace lockstep {

void Coordinator::LoseServer(const std::string& id, const std::string& why) {
  const Peer gone = peers_[id];
  peers_.erase(id);
  if (gone.rank >= 0 && static_cast<size_t>(gone.rank) < server_ids_.size()) {
    server_ids_[gone.rank].clear();
  }
  const std::string what =
      "server " + std::to_string(gone.rank) + " on " + gone.host + " " + why;
  const bool snapshots = !options_.job.snapshot_dir.empty();
  const ManifestRound* latest =
      training_ && snapshots ? manifest_.LatestComplete() : nullptr;
  if (latest == nullptr) {
    const std::string missing =
        !training_ ? "before training started"
        : snapshots
            ? "and no snapshot round is complete yet"
            : "and the job takes no snapshots (--snapshot-every-clocks)";
    abort_status_ = Unavailable(what + " " + missing +
                                ", so its part of the model is lost");
    LS_LOG(Error) << abort_status_.message();
    return;
  }
  // A copy: recording the abandoned round below changes the manifest.
  const ManifestRound round = *latest;
  if (!recovering_) recovery_started_s_ = NowSeconds();
  recovering_ = true;  // no round starts for a tool's request meanwhile
  if (auto abandoned = rounds_.Abandon("server " + std::to_string(gone.rank) +
                                       " was lost")) {
    FinishRound(std::move(*abandoned));
  }
  final_round_clock_.reset();
  ++recoveries_;
  BeginRollback(round, what);
}

void Coordinator::BeginRollback(const ManifestRound& round,
                                const std::string& why) {
  restore_ = round;
  ++epoch_;
  recovering_ = true;
  restored_.clear();
  for (const std::string& tool : round_requests_) {
    Reply(tool, MakeErrorHeader(wire::ErrorCode::NotReady,
                                "the job is rolling back; ask again", 0,
                                wire::Role::Coordinator, 0));
  }
  round_requests_.clear();
  LS_LOG(Warning) << why << "; rolling every shard back to snapshot round "
                  << round.round << " (clock " << round.clock
                  << "), recovery epoch " << epoch_;
  for (const auto& server : server_ids_) {
    if (!server.empty()) SendWelcome(server, peers_[server]);
  }
}

bool Coordinator::AcceptReturningServer(const std::string& id,
                                        const wire::Register& reg) {
  const auto shards = static_cast<int>(server_ids_.size());
  int slot = reg.rank_hint();
  if (slot < 0 || slot >= shards) {
    const auto free = std::find(server_ids_.begin(), server_ids_.end(), "");
    if (free == server_ids_.end()) return false;
    slot = static_cast<int>(free - server_ids_.begin());
  }
  if (!server_ids_[slot].empty()) {
    // A new process for a shard that looks alive: the old one is gone (a
    // supervisor restarts a server faster than it is declared dead).
    LoseServer(server_ids_[slot], "was replaced by a new server process");
    if (!abort_status_.ok()) return true;
  }
  Peer peer;
  peer.role = wire::Role::Server;
  peer.rank = slot;
  peer.rank_hint = reg.rank_hint();
  peer.endpoint = flatbuffers::GetString(reg.endpoint());
  peer.host = flatbuffers::GetString(reg.host());
  peers_[id] = peer;
  server_ids_[slot] = id;
  layout_.set_endpoint(slot, peer.endpoint);
  LS_LOG(Warning) << "server " << slot << " is back from " << peer.host
                  << " pid " << reg.pid() << " at " << peer.endpoint;
  SendWelcome(id, peers_[id]);
  return true;
}

void Coordinator::HandleRestored(const Peer& peer,
                                 const wire::Restored& restored) {
  if (!recovering_ || restored.epoch() != epoch_) return;
  restored_.insert(peer.rank);
  LS_LOG(Info) << "server " << peer.rank << " restored round "
               << restored.round() << " (" << restored_.size() << "/"
               << server_ids_.size() << ")";
  if (restored_.size() == server_ids_.size()) FinishRecovery();
}

void Coordinator::FinishRecovery() {
  const int64_t clock = restore_->clock + 1;
  auto policy = CreateSyncPolicy(options_.job);
  if (!policy.ok()) {
    abort_status_ = policy.status().WithContext("recovery");
    return;
  }
  policy_ = std::move(policy).value();
  ResumePolicy(*restore_);
  ledger_ = CommitLedger(options_.job.servers);
  rounds_ = RoundTracker(options_.job.snapshot_every_clocks,
                         options_.job.snapshot_every_s, NowSeconds(),
                         restore_->clock);
  final_eval_received_ = false;
  final_evaluator_.clear();
  training_over_ = false;
  recovering_ = false;
  if (!evaluator_id_.empty() && peers_[evaluator_id_].started) {
    // The evaluator reads the points of the new timeline.
    peers_[evaluator_id_].pending_admit.reset();
    SendStart(evaluator_id_, peers_[evaluator_id_]);
  }
  for (const auto& id : worker_ids_) {
    Peer& peer = peers_[id];
    peer.finished = false;
    peer.pending_admit.reset();
    peer.clock = -1;
    if (!peer.started) continue;  // its Start comes once it describes
    policy_->OnWorkerJoined(static_cast<uint32_t>(peer.rank), clock, peer.caps);
    SendStart(id, peer);
  }
  first_commit_pending_ = true;
  LS_LOG(Warning) << "recovered in " << NowSeconds() - recovery_started_s_
                  << " s: every shard holds snapshot round " << restore_->round
                  << "; training continues at clock " << clock
                  << " (recovery epoch " << epoch_ << ")";
}

Status Coordinator::CheckRecoveryDeadline() const {
  if (!recovering_ ||
      NowSeconds() - recovery_started_s_ <= options_.register_timeout_s) {
    return Status::Ok();
  }
  std::string missing;
  for (size_t k = 0; k < server_ids_.size(); ++k) {
    if (restored_.count(static_cast<int>(k)) != 0) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(k);
  }
  return DeadlineExceeded("recovery did not finish within " +
                          std::to_string(options_.register_timeout_s) +
                          " s: server(s) " + missing +
                          " did not come back or restore");
}

bool Coordinator::CurrentEpoch(const Peer& peer, uint32_t epoch) const {
  if (!recovering_ && epoch == epoch_) return true;
  LS_LOG(Debug) << "ignored a report of worker " << peer.rank
                << " from recovery epoch " << epoch << " (now " << epoch_
                << (recovering_ ? ", recovering)" : ")");
  return false;
}

}  // namespace lockstep
