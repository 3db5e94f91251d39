// The job's clock: the sync policy's admission and commit decisions, the
// sample budget and the commit ledger (the learning rate of a clock is
// the shards' to evaluate: common/lr_schedule.h); the
// progress it commits drives the job's evaluations (EvaluationDriver, its
// own). It sends Admissions to workers and Commits to every server; what
// a commit means to snapshot rounds and recovery it says to its listener.
// Thread-safety: not thread-safe; the coordinator's thread owns it.
#ifndef LOCKSTEP_COORDINATOR_CLOCK_CLOCK_DRIVER_H_
#define LOCKSTEP_COORDINATOR_CLOCK_CLOCK_DRIVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/job_config.h"
#include "common/status.h"
#include "coordinator/clock/clock_listener.h"
#include "coordinator/clock/commit_ledger.h"
#include "coordinator/clock/evaluation_driver.h"
#include "coordinator/clock/sample_budget.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"
#include "coordinator/state/run_recorder.h"
#include "coordinator/state/ticket_desk.h"
#include "snapshot_format/snapshot_manifest.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

class ClockDriver {
 public:
  // Drives `policy`. `job`, `outbox`, `members`, `tickets` (which seals
  // each admitted quota), `recorder` and `listener` must outlive the
  // driver; `job` is read at each use (it is resolved once training
  // starts).
  ClockDriver(const JobConfig& job, std::unique_ptr<SyncPolicy> policy,
              Outbox& outbox, Membership& members, TicketDesk& tickets,
              RunRecorder& recorder, ClockListener& listener);

  const SyncPolicy& policy() const { return *policy_; }
  // Decision time spent in the policy so far.
  double policy_seconds() const { return policy_seconds_; }
  // The job's evaluations, up to the final one.
  EvaluationDriver& evaluation() { return evaluation_; }
  const EvaluationDriver& evaluation() const { return evaluation_; }

  // Training starts with the resolved job: its lr schedule, sample budget
  // and evaluation points.
  Status StartJob();
  // The (new) policy continues after `round`: resumes at its clock + 1
  // with the policy state the round holds, when it was taken under the
  // same policy.
  void ResumeAt(const ManifestRound& round);
  // A recovery finished: a new policy continues after `round` with a fresh
  // ledger, and the final evaluation is asked again once training ends.
  Status Restart(const ManifestRound& round);
  // Worker `peer` joins the policy at `clock` (its Start follows).
  void Join(const Peer& peer, int64_t clock);
  // Worker `peer` joins the running job at the policy's current clock
  // (timed as a decision). Returns that clock.
  int64_t JoinRunning(const Peer& peer);
  // A started worker left: the policy re-evaluates without it.
  void WorkerLeft(const Peer& gone);

  // REQUIRES: training. Admits worker `peer` (routing id `id`) to `clock`,
  // defers it, or tells it the job is over; the evaluator's Admit asks for
  // its next evaluation point.
  void HandleAdmit(const std::string& id, Peer& peer, int64_t clock);
  void HandleClockDone(const Peer& peer, const wire::ClockDone& done);
  void HandleCommitted(const wire::Committed& committed);
  // Sends server `server` again every commit after clock `after` that not
  // every shard has applied (a promoted backup's primary may have died
  // before passing them on).
  void ResendCommits(const std::string& server, int64_t after);
  // The newest committed clock (-1 before any).
  int64_t LastCommittedClock() const { return policy_->CurrentClock() - 1; }
  // The policy's state now (apply-on-arrival: with the samples processed).
  PolicyState PolicyStateNow() const;

 private:
  void IssueCommits(const std::vector<CommitDecision>& commits);
  void AnswerPendingAdmissions();
  // Admits `peer` to `decision`, or tells it the job is over when `done`
  // or the decision is past the job's end.
  void SendAdmission(const std::string& id, Peer& peer,
                     const AdmissionDecision& decision, bool done = false);
  // Tells a worker asking for `clock` that the job is over.
  void SendFinished(const std::string& id, Peer& peer, int64_t clock);
  bool OnArrival() const;
  // Nothing is left to admit: an apply-on-arrival job's sample budget is
  // spent (sample_budget.h), or every clock of a barrier job is under way
  // or done (a worker joining now has no slice of the last: BatchPlan).
  // Also once the job's time budget is spent (OutOfTime).
  bool Ended() const;
  // budget_s > 0 and training (evaluations left out) ran that long.
  bool OutOfTime() const;
  // Apply-on-arrival jobs: the samples processed, in whole clocks of X.
  int64_t ProgressClocks() const;
  // The clock a pull of the final model names (under BSP the servers
  // answer once the clock before it is applied).
  int64_t FinalModelClock() const;
  // Runs a policy call and adds its duration to the decision time.
  template <typename Call>
  auto Timed(Call call) -> decltype(call()) {
    const double start = NowSeconds();
    auto result = call();
    policy_seconds_ += NowSeconds() - start;
    return result;
  }

  const JobConfig& job_;
  std::unique_ptr<SyncPolicy> policy_;
  Outbox& outbox_;
  Membership& members_;
  TicketDesk& tickets_;
  RunRecorder& recorder_;
  ClockListener& listener_;
  std::map<int64_t, std::string> unapplied_commits_;  // Commit envelopes
  CommitLedger ledger_;
  SampleBudget budget_;
  EvaluationDriver evaluation_{members_, outbox_, recorder_, listener_,
                               [this] { return FinalModelClock(); }};
  // Apply-on-arrival: samples of pushes every shard applied (reports
  // without a drop), the progress the shards' evaluation images follow.
  uint64_t applied_samples_ = 0;
  double policy_seconds_ = 0;
  bool recorder_started_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_CLOCK_CLOCK_DRIVER_H_
