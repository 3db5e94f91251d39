#include "coordinator/replicas/replica_failover.h"

#include "common/clock.h"
#include "common/logging.h"
#include "common/wire/shard_messages.h"

namespace lockstep {

std::vector<std::string> ReplicaFailover::BackupEndpoints(
    uint32_t shard) const {
  std::vector<std::string> endpoints;
  for (uint32_t slot : placement_.BackupSlots(shard)) {
    const std::string& id = members_.server_ids()[slot];
    if (!id.empty()) endpoints.push_back(members_.at(id).endpoint);
  }
  return endpoints;
}

void ReplicaFailover::SendPromote(uint32_t shard, uint32_t slot) {
  outbox_.Send(members_.server_ids()[slot],
               MakePromoteHeader(shard, BackupEndpoints(shard)));
}

bool ReplicaFailover::Promote(uint32_t gone, const std::string& what,
                              KeyLayout& layout) {
  ReplicaPlacement after = placement_;
  const ReplicaPlacement::Loss loss = after.LoseSlot(gone);
  if (!loss.lost.empty()) {
    LS_LOG(Error) << what << ": shard " << loss.lost.front()
                  << " has no live copy left";
    return false;
  }
  placement_ = after;
  rounds_.AbandonForLoss(what);
  lost_at_s_ = NowSeconds();
  first_commit_pending_ = false;
  for (const auto& [shard, slot] : loss.promoted) {
    const Peer& server = members_.at(members_.server_ids()[slot]);
    layout.set_endpoint(shard, server.endpoint);
    pending_[shard] = NowSeconds();
    ++promotions_;
    LS_LOG(Warning) << what << "; promoting shard " << shard
                    << "'s backup on server " << slot << " at "
                    << server.endpoint << " (no rollback)";
    SendPromote(shard, slot);
  }
  for (uint32_t shard : loss.shrunk) {
    LS_LOG(Warning) << "shard " << shard << " has "
                    << placement_.BackupSlots(shard).size() << " backups left";
    SendPromote(shard, placement_.PrimarySlot(shard));
  }
  return true;
}

void ReplicaFailover::HandlePromoted(const std::string& id,
                                     const wire::Promoted& promoted,
                                     const KeyLayout& layout) {
  const uint32_t shard = promoted.shard();
  auto it = pending_.find(shard);
  if (it == pending_.end()) return;  // a primary told of its backups
  if (members_.server_ids()[placement_.PrimarySlot(shard)] != id) return;
  const double took = NowSeconds() - it->second;
  pending_.erase(it);
  clock_.ResendCommits(id, promoted.applied_clock());
  const std::string& endpoint = layout.shards()[shard].endpoint;
  // The new primary expects the backups left as joiners (Promote): now
  // that it serves, they follow it.
  for (uint32_t slot : placement_.Recopy(shard)) {
    const std::string& backup = members_.server_ids()[slot];
    if (backup.empty()) continue;
    outbox_.Send(backup, MakeFollowHeader(shard, endpoint));
    LS_LOG(Info) << "server " << slot << "'s backup of shard " << shard
                 << " follows the promoted primary (a live copy first)";
  }
  zmq::message_t header = MakeRerouteHeader(shard, endpoint);
  outbox_.SendToEach(members_.worker_ids(), header);
  if (!members_.evaluator_id().empty()) {
    outbox_.SendToEach({members_.evaluator_id()}, header);
  }
  first_commit_pending_ = pending_.empty();
  LS_LOG(Warning) << "shard " << shard << " is served at " << endpoint
                  << " from clock " << promoted.applied_clock()
                  << ", promoted in " << took
                  << " s; workers rerouted, nothing rolled back";
}

void ReplicaFailover::LogFirstCommit(int64_t clock) {
  if (!first_commit_pending_) return;
  first_commit_pending_ = false;
  LS_LOG(Warning) << "first commit after the promotion: clock " << clock << ", "
                  << NowSeconds() - lost_at_s_
                  << " s after the server was lost";
}

}  // namespace lockstep
