// Departures: how the job ends when the cluster engine terminates some of
// it (Slurm's preemption, requeue and time limit, Kubernetes' pod deletion,
// eviction and scale-down all send SIGTERM; how a role hears it is
// common/termination.h, the one termination concept; a terminated role
// tells the coordinator Leave, and this class decides what that departure
// means).
//
// The coordinator terminated, a server terminated (the job cannot go on
// without its shard) or every worker terminated: the job is *preempted*.
// A snapshot round of the newest committed clock starts at once (after the
// round in flight, if any), and once it is durable - or failed, or took
// kPreemptionRoundMs - every peer gets Shutdown(Preempted) naming the
// round a resumed job starts from, and exits with kExitPreempted.
// Terminated servers and workers stay up until then (they only said Leave).
//
// A worker or the evaluator terminated while the others go on *leaves*:
// after kLeaveSettleMs (Slurm signals every task of a job within
// milliseconds, and the coordinator may hear its own SIGTERM a moment
// after the workers' Leaves), it is removed as a dead worker would be
// (the policy re-splits without it) and told Shutdown(Released).
// Thread-safety: not thread-safe; the coordinator's thread owns it.
#ifndef LOCKSTEP_COORDINATOR_FAULTS_DEPARTURES_H_
#define LOCKSTEP_COORDINATOR_FAULTS_DEPARTURES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/job_config.h"
#include "common/wire/message.h"
#include "coordinator/enrollment/enrollment.h"
#include "coordinator/rounds/snapshot_rounds.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"

namespace lockstep {

class Departures {
 public:
  // How the job ends: the Shutdown every peer gets.
  struct Ending {
    wire::ShutdownKind kind = wire::ShutdownKind::Preempted;
    std::string reason;
  };

  static constexpr int64_t kLeaveSettleMs = 1000;

  // Every argument must outlive this. `settle_ms`: how long a leaving
  // worker stays (tests shorten it).
  Departures(const JobConfig& job, Outbox& outbox, const Membership& members,
             SnapshotRounds& rounds, Enrollment& enrollment,
             int64_t settle_ms = kLeaveSettleMs)
      : job_(job),
        outbox_(outbox),
        members_(members),
        rounds_(rounds),
        enrollment_(enrollment),
        settle_ms_(settle_ms) {}

  bool preempting() const { return preempting_; }
  // Preempts the job (once; later calls change nothing).
  void Preempt(const std::string& why);
  // A Leave from the registered peer `id`.
  void HandleLeave(const std::string& id, const Peer& peer,
                   const std::string& reason);
  // Called every turn of the coordinator's loop: lets settled leavers go
  // (or preempts, when none would be left to train), and once preempting
  // returns the Ending when it is due; nullopt until then.
  std::optional<Ending> Tick();

 private:
  // The Ending of a preemption whose round finished, failed or ran out
  // of time (`round`: the round asked for, if it finished).
  Ending PreemptedEnding(const std::optional<ManifestRound>& round) const;
  void Release(const std::string& id, const std::string& reason);

  // Leavers whose settle time passed go, unless none would be left.
  void SettleLeavers();

  const JobConfig& job_;
  Outbox& outbox_;
  const Membership& members_;
  SnapshotRounds& rounds_;
  Enrollment& enrollment_;
  const int64_t settle_ms_;
  bool preempting_ = false;
  std::string why_;
  bool round_asked_ = false;
  std::string no_round_;  // why no round could be asked for
  int64_t deadline_ms_ = 0;
  // Workers and the evaluator that said Leave: when they may go, and why.
  std::map<std::string, std::pair<int64_t, std::string>> leavers_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_FAULTS_DEPARTURES_H_
