// Recovery from a lost server. The model lives only on the servers, so a
// shard that dies takes its part with it: every shard rolls back to the
// latest complete snapshot round and the job continues at that round's
// clock + 1, whatever the policy.
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
//
// Under --replicas a lost server costs no rollback while every shard it
// served has a live backup: ReplicaFailover promotes them instead.
// Thread-safety: not thread-safe; the coordinator's thread owns it.
#ifndef LOCKSTEP_COORDINATOR_FAULTS_RECOVERY_H_
#define LOCKSTEP_COORDINATOR_FAULTS_RECOVERY_H_

#include <cstdint>
#include <set>
#include <string>

#include "common/job_config.h"
#include "common/status.h"
#include "coordinator/clock/clock_driver.h"
#include "coordinator/enrollment/enrollment.h"
#include "coordinator/replicas/replica_failover.h"
#include "coordinator/rounds/snapshot_rounds.h"
#include "coordinator/state/job_host.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"
#include "coordinator/state/recovery_epoch.h"
#include "snapshot_format/snapshot_manifest.h"

namespace lockstep {

class Recovery {
 public:
  // A recovery that does not finish within `deadline_s` ends the job.
  // Every reference must outlive the recovery.
  // Recovery advances `epoch`.
  Recovery(const JobConfig& job, double deadline_s, JobHost& host,
           Outbox& outbox, Membership& members, SnapshotRounds& rounds,
           ClockDriver& clock, RecoveryEpoch& epoch)
      : job_(job),
        deadline_s_(deadline_s),
        host_(host),
        members_(members),
        rounds_(rounds),
        clock_(clock),
        epoch_(epoch),
        failover_(job, outbox, members, rounds, clock) {}

  ReplicaFailover& failover() { return failover_; }
  const ReplicaFailover& failover() const { return failover_; }

  // The epoch every message of the job's current timeline carries.
  uint32_t epoch() const { return epoch_.value(); }
  bool recovering() const { return recovering_; }
  uint64_t recoveries() const { return recoveries_; }
  // Whether a worker's message of recovery epoch `epoch` counts now.
  bool CurrentEpoch(const Peer& peer, uint32_t epoch) const;
  // Logs the first commit (apply-on-arrival: the first clock applied) after
  // a recovery, once.
  void LogFirstCommitAfterRecovery(int64_t clock);
  // A recovery running longer than the deadline: which shards are missing.
  Status CheckDeadline() const;

  // Server `id` is lost (`why`): every shard rolls back to the latest
  // complete round, or the job ends when none can be restored.
  void LoseServer(const std::string& id, const std::string& why,
                  Enrollment& enrollment);
  // Under --replicas, a backup's feed from shard `shard`'s primary at
  // `primary` closed (`why`): that server is lost now, not once the
  // liveness limit passed. Stale when the shard is served elsewhere now.
  void HandlePrimaryLost(uint32_t shard, const std::string& primary,
                         const std::string& why, Enrollment& enrollment);
  // A server registering while the job trains takes a lost (or replaced)
  // shard's rank. False when there is no shard for it.
  bool AcceptReturningServer(const std::string& id, const wire::Register& reg,
                             Enrollment& enrollment);
  // A new recovery epoch: every live server is welcomed with `round`.
  void BeginRollback(const ManifestRound& round, const std::string& why,
                     Enrollment& enrollment);
  // A server could not restore `round`, which is damaged (SnapshotRounds
  // marks it failed): every shard rolls back to the round before, at
  // start-up as in a live recovery; with none left the job ends.
  void HandleRestoreFailed(int shard, uint64_t round, const std::string& why,
                           Enrollment& enrollment);
  // A server could not restore `round` for a reason that is not the
  // round's damage (RoundIncompatible: another job's round;
  // RoundUnreadable: a store it cannot read): nothing is marked failed, and
  // the job ends naming the reason. A report of a round not being
  // restored now is late news, and ignored.
  void HandleRoundNotRestored(int shard, uint64_t round, wire::ErrorCode code,
                              const std::string& why);
  // Server `peer` restored the round of `restored`'s epoch; once every
  // shard has, training continues (FinishRecovery).
  void HandleRestored(const Peer& peer, const wire::Restored& restored,
                      Enrollment& enrollment);

 private:
  // Every shard restored: the policy restarts at the round's clock + 1 and
  // every worker gets its Start.
  void FinishRecovery(Enrollment& enrollment);

  const JobConfig& job_;
  double deadline_s_;
  JobHost& host_;
  Membership& members_;
  SnapshotRounds& rounds_;
  ClockDriver& clock_;
  RecoveryEpoch& epoch_;
  bool recovering_ = false;
  double started_s_ = 0;
  // Set when a recovery finishes, until the first commit after it (logged
  // with the time since the loss was noticed, for bench/recovery).
  bool first_commit_pending_ = false;
  std::set<int> restored_;  // the shards that restored this epoch's round
  uint64_t recoveries_ = 0;
  ReplicaFailover failover_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_FAULTS_RECOVERY_H_
