#include "coordinator/state/membership.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "coordinator/state/rank_assignment.h"

namespace lockstep {

// A worker states its capabilities in Register and again in Describe; a
// quota must respect every limit it gave, so the smallest max_batch wins.
void TightenWorkerCaps(const CapabilityList* list, WorkerCaps* caps) {
  if (list == nullptr) return;
  for (const auto* cap : *list) {
    unsigned long v = 0;
    if (std::sscanf(cap->c_str(), "max_batch=%lu", &v) == 1 && v > 0 &&
        (caps->max_batch == 0 || v < caps->max_batch)) {
      caps->max_batch = static_cast<uint32_t>(v);
    }
  }
}

Peer* Membership::Find(const std::string& id) {
  auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : &it->second;
}

Peer* Membership::FindByRank(wire::Role role, int rank) {
  // Peers not numbered yet have rank -1; a sender without a rank must not
  // match them.
  auto it = std::find_if(peers_.begin(), peers_.end(), [&](const auto& p) {
    return p.second.role == role && p.second.rank == rank && p.second.rank >= 0;
  });
  return it == peers_.end() ? nullptr : &it->second;
}

Peer* Membership::evaluator() {
  return evaluator_id_.empty() ? nullptr : Find(evaluator_id_);
}

void Membership::Add(const std::string& id, const Peer& peer) {
  peers_[id] = peer;
  (peer.role == wire::Role::Server ? server_ids_ : worker_ids_).push_back(id);
}

void Membership::AddEvaluator(const std::string& id, const Peer& peer) {
  peers_[id] = peer;
  evaluator_id_ = id;
}

void Membership::PlaceServer(int slot, const std::string& id,
                             const Peer& peer) {
  peers_[id] = peer;
  server_ids_[slot] = id;
}

Peer Membership::RemoveWorker(const std::string& id) {
  Peer gone = peers_[id];
  peers_.erase(id);
  std::erase(worker_ids_, id);
  removed_.emplace_back(id, gone.rank);
  if (removed_.size() > kRememberRemoved) removed_.pop_front();
  return gone;
}

bool Membership::RecentlyRemoved(const std::string& id, wire::Role role,
                                 int rank) const {
  if (peers_.count(id) > 0) return false;
  const bool rank_free =
      std::none_of(peers_.begin(), peers_.end(), [&](const auto& p) {
        return p.second.role == wire::Role::Worker && p.second.rank == rank;
      });
  const bool side_socket = role == wire::Role::Worker && rank >= 0 && rank_free;
  return std::any_of(removed_.begin(), removed_.end(), [&](const auto& r) {
    return r.first == id || (side_socket && r.second == rank);
  });
}

Peer Membership::RemoveServer(const std::string& id) {
  Peer gone = peers_[id];
  peers_.erase(id);
  // The slot stays, empty, so shard k is still server_ids_[k] and the
  // layout's endpoints keep their places. A server lost before the ranks
  // were assigned (rank -1) ends the job anyway (Recovery::LoseServer).
  if (gone.rank >= 0 && static_cast<size_t>(gone.rank) < server_ids_.size()) {
    server_ids_[gone.rank].clear();
  }
  return gone;
}

void Membership::RemoveEvaluator(const std::string& id) {
  peers_.erase(id);
  if (evaluator_id_ == id) evaluator_id_.clear();
}

void Membership::WelcomeWorkers() {
  AssignRanks(worker_ids_);
  workers_welcomed_ = true;
}

void Membership::AssignServerRanks() { AssignRanks(server_ids_); }

void Membership::AssignRanks(std::vector<std::string>& ids) {
  std::vector<int> hints;
  hints.reserve(ids.size());
  for (const auto& id : ids) hints.push_back(peers_[id].rank_hint);
  // Reordered so that index i holds rank i. For servers this lasts (a lost
  // one leaves its slot empty), so server_ids_[k] is shard k.
  const std::vector<int> ranks = lockstep::AssignRanks(hints);
  std::vector<std::string> by_rank(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    peers_[ids[i]].rank = ranks[i];
    by_rank[ranks[i]] = ids[i];
  }
  ids = std::move(by_rank);
}

int Membership::FreeWorkerRank(const std::string& id) const {
  // The others already have their ranks.
  std::set<int> taken;
  for (const auto& other : worker_ids_) {
    if (other != id) taken.insert(peers_.at(other).rank);
  }
  return FreeRank(peers_.at(id).rank_hint, taken, static_cast<int>(workers_));
}

std::optional<std::string> Membership::WorkerOfRank(int rank) const {
  for (const auto& id : worker_ids_) {
    if (peers_.at(id).rank == rank) return id;
  }
  return std::nullopt;
}

std::optional<std::string> Membership::WorkerOfCredential(
    int64_t credential) const {
  if (credential < 0) return std::nullopt;
  for (const auto& id : worker_ids_) {
    if (peers_.at(id).credential == credential) return id;
  }
  return std::nullopt;
}

int Membership::ServerSlotFor(int rank_hint) const {
  // A hint naming a shard wins even when that shard looks alive: the new
  // process replaces the old one (Recovery::AcceptReturningServer).
  const auto shards = static_cast<int>(server_ids_.size());
  if (rank_hint >= 0 && rank_hint < shards) return rank_hint;
  const auto free = std::find(server_ids_.begin(), server_ids_.end(), "");
  if (free == server_ids_.end()) return -1;
  return static_cast<int>(free - server_ids_.begin());
}

std::vector<int64_t> Membership::ServerClocks() const {
  std::vector<int64_t> clocks;
  for (const auto& id : server_ids_) {
    if (!id.empty()) clocks.push_back(peers_.at(id).applied_clock);
  }
  return clocks;
}

std::vector<uint32_t> Membership::WorkerRanks() const {
  std::vector<uint32_t> ranks;
  for (const auto& id : worker_ids_) {
    ranks.push_back(static_cast<uint32_t>(peers_.at(id).rank));
  }
  return ranks;
}

int Membership::LowestWorker() const {
  int best = -1;
  for (const auto& id : worker_ids_) {
    const int rank = peers_.at(id).rank;
    if (best < 0 || rank < best) best = rank;
  }
  return best;
}

bool Membership::AllWorkersFinished() const {
  // No worker is not a finished job: Enrollment::RemoveWorker asks whether
  // training is over right after removing a worker whose successor may
  // still be registering (and a job left with none is aborted there).
  if (worker_ids_.empty()) return false;
  return std::all_of(worker_ids_.begin(), worker_ids_.end(),
                     [&](const auto& id) { return peers_.at(id).finished; });
}

void Membership::HeardFromAll(int64_t now_ms) {
  for (auto& [id, peer] : peers_) {
    peer.last_seen_ms = std::max(peer.last_seen_ms, now_ms);
  }
}

SilentPeers Membership::FindSilent(int64_t now_ms, int64_t limit_ms,
                                   double restore_limit_ms) const {
  SilentPeers silent;
  for (const auto& [id, peer] : peers_) {
    // A server (or the evaluator) waits silently for its Welcome (sent once
    // the workers have registered or described the job; before it the
    // heartbeat interval is not known); the registration deadline covers
    // that wait.
    if (!peer.welcomed && peer.role != wire::Role::Worker) continue;
    // A server restoring a round is silent until it has loaded its part
    // (seconds per GB); the registration deadline bounds that too.
    if (peer.restoring && now_ms - peer.last_seen_ms <= restore_limit_ms) {
      continue;
    }
    if (now_ms - peer.last_seen_ms <= limit_ms) continue;
    const std::string why = "sent nothing for " +
                            std::to_string(now_ms - peer.last_seen_ms) + " ms";
    if (peer.role == wire::Role::Evaluator) {
      silent.evaluator = why;
      continue;
    }
    (peer.role == wire::Role::Worker ? silent.workers : silent.servers)
        .emplace_back(id, why);
  }
  return silent;
}

}  // namespace lockstep
