// Where each shard's copies live under --replicas R: its primary (the
// server that serves workers and writes rounds) and R backups, each on
// another server. The job starts on a ring: shard k's primary is server
// slot k and its backups are slots k+1 .. k+R (mod S). When a server is
// lost, each shard it served is promoted to its first live backup, and
// every shard it held a backup of has one backup fewer; a shard left with
// no copy at all is lost (the job rolls back to a snapshot round).
// Thread-safety: not thread-safe; the coordinator's thread.
#ifndef LOCKSTEP_COORDINATOR_REPLICAS_REPLICA_PLACEMENT_H_
#define LOCKSTEP_COORDINATOR_REPLICAS_REPLICA_PLACEMENT_H_

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace lockstep {

class ReplicaPlacement {
 public:
  // The ring placement of `servers` shards with `replicas` backups each.
  ReplicaPlacement(uint32_t servers, uint32_t replicas);

  uint32_t replicas() const { return replicas_; }
  uint32_t PrimarySlot(uint32_t shard) const { return primary_[shard]; }
  const std::vector<uint32_t>& BackupSlots(uint32_t shard) const {
    return backups_[shard];
  }
  // The shards whose backup slot `slot` holds.
  std::vector<uint32_t> BackupsHeldBy(uint32_t slot) const;
  // The shards slot `slot` serves.
  std::vector<uint32_t> ServedBy(uint32_t slot) const;
  // Slot `slot` (a server that replaced a lost one) holds a backup of each
  // shard with fewer than R that it does not serve. Returns those shards.
  // Such a backup is no copy to promote until it is ready (MarkReady).
  std::vector<uint32_t> AddBackupsOn(uint32_t slot);
  // The backups `shard` has left after its promotion: each copies the new
  // primary's state, and is no copy to promote until it is ready
  // (MarkReady). Returns their slots.
  std::vector<uint32_t> Recopy(uint32_t shard);
  // Slot `slot`'s backup of `shard` holds its copy. False when it was not
  // waited for.
  bool MarkReady(uint32_t shard, uint32_t slot) {
    return pending_.erase({shard, slot}) > 0;
  }
  // Whether every shard is served by its own slot (nothing promoted).
  bool OnRing() const;

  struct Loss {
    // (shard, slot now serving it): backups promoted.
    std::vector<std::pair<uint32_t, uint32_t>> promoted;
    // Shards still served where they were, with one backup fewer.
    std::vector<uint32_t> shrunk;
    // Shards with no copy left: the loss needs a rollback.
    std::vector<uint32_t> lost;
  };
  // Server slot `slot` is gone: the placement without it.
  Loss LoseSlot(uint32_t slot);
  // Back to the ring (a rollback re-places every shard).
  void Reset();

 private:
  uint32_t servers_;
  uint32_t replicas_;
  std::vector<uint32_t> primary_;                    // by shard
  std::vector<std::vector<uint32_t>> backups_;       // by shard, in order
  std::set<std::pair<uint32_t, uint32_t>> pending_;  // (shard, slot) copying
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_REPLICAS_REPLICA_PLACEMENT_H_
