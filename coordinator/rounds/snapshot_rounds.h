// Snapshot rounds: when one starts, what the shards report, the manifest
// that records them, the round a resumed (or recovering) job restores, and
// the tools waiting for a round they asked for. A round starts right
// behind a commit on every server's queue, so each shard freezes the state
// after that commit.
// Thread-safety: not thread-safe; the coordinator's thread owns it.
#ifndef LOCKSTEP_COORDINATOR_ROUNDS_SNAPSHOT_ROUNDS_H_
#define LOCKSTEP_COORDINATOR_ROUNDS_SNAPSHOT_ROUNDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"
#include "coordinator/rounds/round_tracker.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"
#include "snapshot_format/snapshot_manifest.h"

namespace lockstep {

// What a round records of the job beside the model. The policy object is
// replaced on recovery, so the rounds ask for it each time.
class RoundContext {
 public:
  virtual ~RoundContext() = default;
  // The newest committed clock; -1 before training or before any commit.
  virtual int64_t LastCommittedClock() const = 0;
  virtual std::string PolicyName() const = 0;
  // The policy's state now, i.e. after the last commit (apply-on-arrival:
  // with the samples processed, kProcessedSamplesKey).
  virtual PolicyState PolicyStateNow() const = 0;
  // The shards of the layout.
  virtual uint32_t Shards() const = 0;
  // A recovery is under way: no round starts for a tool's request.
  virtual bool Recovering() const = 0;
  // The run's progress now: seconds of training and samples processed
  // since the job began (a resumed job's count on from its round's).
  virtual double TrainSecondsNow() const = 0;
  virtual uint64_t SamplesNow() const = 0;
};

// What a failed restore of a round leads to (HandleRestoreFailed).
struct RestoreFailure {
  bool ignored = true;  // not the round being restored
  // Roll every shard back to this round (a live recovery).
  std::optional<ManifestRound> previous;
  // Otherwise the job ends with this.
  Status abort;
};

class SnapshotRounds {
 public:
  // `job`, `outbox`, `members` and `context` must outlive the rounds;
  // `job` is read at each use (the job is resolved once training starts).
  SnapshotRounds(const JobConfig& job, Outbox& outbox,
                 const Membership& members, const RoundContext& context)
      : job_(job), outbox_(outbox), members_(members), context_(context) {}

  // Opens or, on `resume`, loads the manifest and picks the round to
  // restore: `resume_round`, or the newest complete one when 0.
  // `if_present`: resume when the manifest has a complete round, else
  // start the job (over a manifest without one: the same job, requeued
  // before its first round was durable).
  Status SetUp(bool resume, uint64_t resume_round, bool if_present = false);
  // The round the job (re)starts from, if any.
  const std::optional<ManifestRound>& restore() const { return restore_; }
  // The newest complete round of the manifest, or nullptr.
  const ManifestRound* LatestComplete() const {
    return manifest_.LatestComplete();
  }
  uint64_t complete() const { return complete_; }
  uint64_t failed() const { return failed_; }

  // After the commit of `clock`: starts a round when one is due (or
  // `force`d), right behind the commit on every server's queue.
  void MaybeStartRound(int64_t clock, bool force);
  // A tool (lockstep-snapshot now) asks for a round now: it starts at the
  // last committed clock (or after the round in flight), and the tool is
  // answered with a SnapshotDone for the whole round once it finished.
  void HandleRoundRequest(const std::string& id);
  void HandleSnapshotDone(const wire::SnapshotDone& done);
  // The engine is terminating the job: a round of the newest committed
  // clock, now or right after the round in flight. Returns why none can
  // be taken ("" when one was asked for).
  std::string StartPreemptionRound();
  // That round once it finished, complete or failed.
  const std::optional<ManifestRound>& preemption_result() const {
    return preemption_result_;
  }
  // A server could not restore `round` (it is damaged): the round is
  // marked failed in the manifest, so no later resume picks it, and every
  // shard rolls back to the complete round before it - at start-up as in
  // a live recovery (the server that failed waits for that welcome); with
  // none left the job ends.
  RestoreFailure HandleRestoreFailed(int shard, uint64_t round,
                                     const std::string& why);
  // Whether `round` is the round being restored now (a report about
  // another is late news).
  bool Restoring(uint64_t round) const {
    return restore_.has_value() && restore_->round == round;
  }
  // The job is resolved (its clock count and data dimensions known): the
  // manifest records it as resolved, so a resume compares what the data
  // set's dimensions are, and how long the job is, with this.
  void RecordResolvedJob();
  // The job ran to its end at `clock`: the manifest says so, so a resume
  // that would train nothing is refused (CheckResumableBy).
  void RecordFinished(int64_t clock);
  // Whether the job may end: no round in flight, or it waited long enough.
  bool Settled();

  // A server was lost: the round in flight is recorded failed and a last
  // round of the job waiting for it is dropped.
  void AbandonForLoss(const std::string& why);
  // A rollback to `round` begins: it is the round to restore, and tools
  // waiting for a round to start are told to ask again.
  void BeginRollback(const ManifestRound& round);
  // Every shard restored: the schedule starts again after the round.
  void FinishRollback();

 private:
  // Starts round after `clock` (the state after its commit) on every
  // server; tools waiting for a round wait for this one.
  void StartRound(int64_t clock);
  void AnswerRoundRequests(const ManifestRound& round);
  // Why no round can be asked for now ("" when one can).
  std::string RoundRefusal() const;
  // Records a finished round in the manifest and prunes it.
  void FinishRound(ManifestRound round);

  const JobConfig& job_;
  Outbox& outbox_;
  const Membership& members_;
  const RoundContext& context_;
  SnapshotManifest manifest_;
  RoundTracker rounds_;
  std::optional<ManifestRound> restore_;
  // The job's last commit came while a round was in flight: its round
  // starts when that one finishes (nothing changes the state after it).
  std::optional<int64_t> final_round_clock_;
  std::vector<std::string> round_requests_;  // tools waiting for a start
  std::map<uint64_t, std::vector<std::string>> round_waiters_;  // by round
  bool preemption_pending_ = false;  // starts once none is in flight
  std::optional<uint64_t> preemption_round_;
  std::optional<ManifestRound> preemption_result_;
  uint64_t complete_ = 0;
  uint64_t failed_ = 0;
  double settle_deadline_s_ = 0;  // when the job stops waiting for a round
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_ROUNDS_SNAPSHOT_ROUNDS_H_
