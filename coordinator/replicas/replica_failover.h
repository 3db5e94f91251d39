// The loss of a server under --replicas: instead of rolling every shard
// back to a snapshot round, each shard the lost server served is promoted
// to a backup on a live server (ReplicaPlacement), which holds every
// commit and every push its primary acknowledged.
//
//  1. A server is lost (Recovery::LoseServer): each of its shards' new
//     server is told Promote (with the shard's remaining backups), each
//     shard that lost a backup there has its primary told the backups it
//     has left, the layout names the new endpoints, and the round in
//     flight is abandoned (the lost server never finishes its part).
//  2. The new server answers Promoted with the clock its copy holds: the
//     commits issued since are sent to it again (a repeat is a no-op), and
//     every worker and the evaluator are told Reroute: they send what
//     waited on the lost server to the new one.
//
// A shard with no live copy needs the rollback (the caller's). A server
// registering for a slot whose shard is served elsewhere holds backups of
// the shards short of theirs (AddBackupsOn), each copied live from its
// primary and no copy to promote until it says BackupReady.
// Thread-safety: not thread-safe; the coordinator's thread.
#ifndef LOCKSTEP_COORDINATOR_REPLICAS_REPLICA_FAILOVER_H_
#define LOCKSTEP_COORDINATOR_REPLICAS_REPLICA_FAILOVER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/logging.h"
#include "common/wire/message.h"
#include "common/wire/placement_messages.h"
#include "coordinator/clock/clock_driver.h"
#include "coordinator/replicas/replica_placement.h"
#include "coordinator/rounds/snapshot_rounds.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"

namespace lockstep {

class ReplicaFailover {
 public:
  // Every reference must outlive this.
  ReplicaFailover(const JobConfig& job, Outbox& outbox, Membership& members,
                  SnapshotRounds& rounds, ClockDriver& clock)
      : outbox_(outbox),
        members_(members),
        rounds_(rounds),
        clock_(clock),
        placement_(job.servers, job.replicas) {}

  const ReplicaPlacement& placement() const { return placement_; }
  // Server slot `slot`'s Welcome fields: the shards it serves, the shards
  // it holds backups of, and where the backups of its own shard are.
  void FillWelcome(uint32_t slot, WelcomeFields* welcome) const {
    welcome->primaries = placement_.ServedBy(slot);
    welcome->backups = placement_.BackupsHeldBy(slot);
    for (const std::string& endpoint : BackupEndpoints(slot)) {
      welcome->backups_at.emplace_back(slot, endpoint);
    }
  }
  std::vector<std::string> BackupEndpoints(uint32_t shard) const;

  // Server slot `gone` (`what`: who and why) is lost: promotes its shards'
  // backups. False when a shard has no live copy (nothing was sent: the
  // caller rolls back, which re-places every shard on the ring).
  bool Promote(uint32_t gone, const std::string& what, KeyLayout& layout);
  // Tells the lost server `id` (if it still runs) to stop.
  void Fence(const std::string& id, const std::string& what) {
    outbox_.Send(id, MakeShutdownHeader(
                         wire::ShutdownKind::Removed,
                         "this server was declared lost (" + what +
                             ") and its shards are served by their backups"));
  }
  // A promoted server's answer: sends it the commits since its clock and
  // reroutes the workers and the evaluator.
  void HandlePromoted(const std::string& id, const wire::Promoted& promoted,
                      const KeyLayout& layout);
  // A server came back to slot `slot`: the primaries of the shards it
  // holds backups of learn where it is.
  void TellPrimariesOfBackupsOn(uint32_t slot) {
    for (uint32_t shard : placement_.BackupsHeldBy(slot)) {
      const uint32_t primary = placement_.PrimarySlot(shard);
      if (!members_.server_ids()[primary].empty()) SendPromote(shard, primary);
    }
  }
  // A server took slot `slot` while its shard is served elsewhere: it
  // holds a backup of every shard short of backups. Returns those shards.
  std::vector<uint32_t> AddBackupsOn(uint32_t slot) {
    return placement_.AddBackupsOn(slot);
  }
  // Server slot `slot` holds its copy of `shard` (BackupReady).
  void HandleBackupReady(uint32_t slot, uint32_t shard) {
    if (placement_.MarkReady(shard, slot)) {
      LS_LOG(Info) << "server " << slot << " holds a live copy of shard "
                   << shard << ": a backup again";
    }
  }
  // A rollback re-places every shard on the ring.
  void Reset() {
    placement_.Reset();
    pending_.clear();
  }
  // Whether a shard is served away from its own slot (a server registering
  // for the slot cannot take it back).
  bool Moved() const { return !placement_.OnRing(); }
  uint64_t promotions() const { return promotions_; }
  // Logs the first commit (on arrival: the first clock) after every
  // promoted shard answered, once, with the time since the loss.
  void LogFirstCommit(int64_t clock);

 private:
  void SendPromote(uint32_t shard, uint32_t slot);

  Outbox& outbox_;
  Membership& members_;
  SnapshotRounds& rounds_;
  ClockDriver& clock_;
  ReplicaPlacement placement_;
  std::map<uint32_t, double> pending_;  // shard -> when it was promoted
  uint64_t promotions_ = 0;
  double lost_at_s_ = 0;  // the last loss
  bool first_commit_pending_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_REPLICAS_REPLICA_FAILOVER_H_
