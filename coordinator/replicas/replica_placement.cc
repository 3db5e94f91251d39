#include "coordinator/replicas/replica_placement.h"

#include <algorithm>

namespace lockstep {

ReplicaPlacement::ReplicaPlacement(uint32_t servers, uint32_t replicas)
    : servers_(servers), replicas_(std::min(replicas, servers - 1)) {
  Reset();
}

void ReplicaPlacement::Reset() {
  pending_.clear();
  primary_.assign(servers_, 0);
  backups_.assign(servers_, {});
  for (uint32_t k = 0; k < servers_; ++k) {
    primary_[k] = k;
    for (uint32_t r = 1; r <= replicas_; ++r) {
      backups_[k].push_back((k + r) % servers_);
    }
  }
}

std::vector<uint32_t> ReplicaPlacement::BackupsHeldBy(uint32_t slot) const {
  std::vector<uint32_t> shards;
  for (uint32_t k = 0; k < servers_; ++k) {
    if (std::count(backups_[k].begin(), backups_[k].end(), slot) > 0) {
      shards.push_back(k);
    }
  }
  return shards;
}

std::vector<uint32_t> ReplicaPlacement::ServedBy(uint32_t slot) const {
  std::vector<uint32_t> shards;
  for (uint32_t k = 0; k < servers_; ++k) {
    if (primary_[k] == slot) shards.push_back(k);
  }
  return shards;
}

std::vector<uint32_t> ReplicaPlacement::AddBackupsOn(uint32_t slot) {
  std::vector<uint32_t> shards;
  for (uint32_t k = 0; k < servers_; ++k) {
    std::vector<uint32_t>& backups = backups_[k];
    if (primary_[k] == slot || backups.size() >= replicas_ ||
        std::count(backups.begin(), backups.end(), slot) > 0) {
      continue;
    }
    backups.push_back(slot);
    pending_.insert({k, slot});
    shards.push_back(k);
  }
  return shards;
}

std::vector<uint32_t> ReplicaPlacement::Recopy(uint32_t shard) {
  for (uint32_t slot : backups_[shard]) pending_.insert({shard, slot});
  return backups_[shard];
}

bool ReplicaPlacement::OnRing() const {
  for (uint32_t k = 0; k < servers_; ++k) {
    if (primary_[k] != k) return false;
  }
  return true;
}

ReplicaPlacement::Loss ReplicaPlacement::LoseSlot(uint32_t slot) {
  Loss loss;
  for (uint32_t k = 0; k < servers_; ++k) {
    std::vector<uint32_t>& backups = backups_[k];
    const bool held = std::erase(backups, slot) > 0;
    pending_.erase({k, slot});
    if (primary_[k] != slot) {
      if (held) loss.shrunk.push_back(k);
      continue;
    }
    // The first backup that holds a copy; one still copying from the lost
    // primary never will.
    auto ready = std::find_if(backups.begin(), backups.end(), [&](uint32_t b) {
      return pending_.count({k, b}) == 0;
    });
    if (ready == backups.end()) {
      loss.lost.push_back(k);
      continue;
    }
    primary_[k] = *ready;
    backups.erase(ready);
    loss.promoted.emplace_back(k, primary_[k]);
  }
  return loss;
}

}  // namespace lockstep
