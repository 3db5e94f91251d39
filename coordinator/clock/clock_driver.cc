#include "coordinator/clock/clock_driver.h"

#include <algorithm>

#include "common/logging.h"
#include "common/wire/message.h"
#include "common/wire/shard_messages.h"
#include "common/wire/worker_messages.h"
#include "coordinator/clock/clock_report_reader.h"
#include "sync_policies/policy_registry.h"

namespace lockstep {

ClockDriver::ClockDriver(const JobConfig& job,
                         std::unique_ptr<SyncPolicy> policy, Outbox& outbox,
                         Membership& members, TicketDesk& tickets,
                         RunRecorder& recorder, ClockListener& listener)
    : job_(job),
      policy_(std::move(policy)),
      outbox_(outbox),
      members_(members),
      tickets_(tickets),
      recorder_(recorder),
      listener_(listener),
      ledger_(job.servers) {}

Status ClockDriver::StartJob() {
  // The schedule against the resolved clock count, before any shard
  // applies it.
  LS_RETURN_IF_ERROR(job_.LearningRateSchedule().status());
  budget_ =
      SampleBudget(static_cast<uint64_t>(job_.max_clocks) * job_.GlobalBatch());
  evaluation_.Start(job_.evaluators > 0 ? job_.eval_every : 0);
  return Status::Ok();
}

void ClockDriver::ResumeAt(const ManifestRound& round) {
  policy_->ResumeAt(round.clock + 1);
  // Rounds of older manifests and of BSP-family jobs do not say: every
  // clock up to the round's processed X samples.
  auto processed = round.policy_state.find(kProcessedSamplesKey);
  budget_.Restore(
      processed != round.policy_state.end() && processed->second.size() == 1
          ? static_cast<uint64_t>(processed->second[0])
          : static_cast<uint64_t>(round.clock + 1) * job_.GlobalBatch());
  applied_samples_ = budget_.processed();
  evaluation_.StartAt(OnArrival() ? ProgressClocks() : round.clock + 1);
  if (round.policy.empty()) return;  // a round of an older manifest
  if (round.policy != policy_->name()) {
    LS_LOG(Info) << "round " << round.round << " was taken under "
                 << round.policy << "; " << policy_->name()
                 << " starts with fresh state";
    return;
  }
  const Status loaded = policy_->LoadState(round.policy_state);
  if (!loaded.ok()) {
    // The model is intact; only the policy's learning is lost.
    LS_LOG(Warning) << "round " << round.round
                    << ": the policy's state is not usable ("
                    << loaded.message() << "); it starts fresh";
  }
}

Status ClockDriver::Restart(const ManifestRound& round) {
  auto policy = CreateSyncPolicy(job_);
  if (!policy.ok()) return policy.status();
  // Nothing of this process's timeline was recorded (a resume whose round
  // was damaged, or a recovery before the first commit): the run continues
  // from this round, as a resume from it would.
  if (recorder_.commits() == 0) {
    LS_RETURN_IF_ERROR(recorder_.TakeUpRound(round));
  }
  policy_ = std::move(policy).value();
  ResumeAt(round);
  // The old timeline's reports and acks are of clocks that run again, and
  // its end is undone: the final evaluation is asked again later.
  ledger_ = CommitLedger(job_.servers);
  evaluation_.Restart();
  return Status::Ok();
}

void ClockDriver::Join(const Peer& peer, int64_t clock) {
  policy_->OnWorkerJoined(static_cast<uint32_t>(peer.rank), clock, peer.caps);
}

int64_t ClockDriver::JoinRunning(const Peer& peer) {
  const int64_t clock = policy_->CurrentClock();
  Timed([&] {
    policy_->OnWorkerJoined(static_cast<uint32_t>(peer.rank), clock, peer.caps);
    return 0;
  });
  return clock;
}

void ClockDriver::WorkerLeft(const Peer& gone) {
  // Its clock in flight goes back to the sample budget for others to take;
  // the policy may now commit a clock that waited for it, and admit the
  // workers deferred behind it.
  budget_.Left(static_cast<uint32_t>(gone.rank));
  IssueCommits(Timed(
      [&] { return policy_->OnWorkerLeft(static_cast<uint32_t>(gone.rank)); }));
  AnswerPendingAdmissions();
}

void ClockDriver::HandleAdmit(const std::string& id, Peer& peer,
                              int64_t clock) {
  if (peer.role == wire::Role::Evaluator) {
    evaluation_.HandleAdmit(peer, clock);
    return;
  }
  if (!recorder_started_) {
    // Time zero is the first admission request, after data loading.
    recorder_.Start();
    recorder_started_ = true;
  }
  if (peer.finished || Ended()) {
    SendFinished(id, peer, clock);
    return;
  }
  // No answer yet is a deferred reply: the Admit waits in pending_admit
  // and is put to the policy again after each report and each departure
  // (AnswerPendingAdmissions).
  auto decision = Timed([&] { return policy_->Admit(peer.rank, clock); });
  if (decision) {
    SendAdmission(id, peer, *decision);
  } else {
    peer.pending_admit = clock;
  }
}

bool ClockDriver::OnArrival() const {
  return policy_->apply_mode() == ApplyMode::kOnArrival;
}

bool ClockDriver::Ended() const {
  if (OutOfTime()) return true;
  return OnArrival() ? budget_.Spent()
                     : policy_->CurrentClock() >= job_.max_clocks;
}

bool ClockDriver::OutOfTime() const {
  return job_.budget_s > 0 && recorder_started_ &&
         recorder_.TrainSeconds() >= job_.budget_s;
}

int64_t ClockDriver::FinalModelClock() const {
  // A job its time budget ended is read where training stopped (under BSP
  // a pull for max_clocks would wait for clocks never committed).
  if (!OutOfTime()) return job_.max_clocks;
  return OnArrival() ? ProgressClocks() : policy_->CurrentClock();
}

int64_t ClockDriver::ProgressClocks() const {
  return static_cast<int64_t>(budget_.processed() /
                              std::max<uint64_t>(1, job_.GlobalBatch()));
}

PolicyState ClockDriver::PolicyStateNow() const {
  PolicyState state = policy_->SaveState();
  if (OnArrival()) {
    state[kProcessedSamplesKey] = {static_cast<double>(budget_.processed())};
  }
  return state;
}

void ClockDriver::SendFinished(const std::string& id, Peer& peer,
                               int64_t clock) {
  AdmissionDecision done;
  done.clock = std::max(clock, job_.max_clocks);
  SendAdmission(id, peer, done, /*done=*/true);
}

void ClockDriver::SendAdmission(const std::string& id, Peer& peer,
                                const AdmissionDecision& decision, bool done) {
  peer.pending_admit.reset();
  // Apply-on-arrival jobs end on the sample budget (sample_budget.h), the
  // others after max_clocks clocks.
  const bool finished =
      done || (!OnArrival() && decision.clock >= job_.max_clocks);
  // The last clock of an apply-on-arrival job takes what is left of the
  // budget, so every policy processes exactly max_clocks x X samples.
  const uint32_t batch = finished ? 0
                         : OnArrival()
                             ? static_cast<uint32_t>(std::min<uint64_t>(
                                   decision.batch, budget_.Remaining()))
                             : decision.batch;
  if (!finished && OnArrival()) {
    budget_.Admitted(static_cast<uint32_t>(peer.rank), batch);
  }
  // Evaluation is out of band (the evaluator's; EvaluationDriver): no
  // training worker is ever asked to evaluate before the job is over.
  peer.clock = decision.clock;
  peer.admitted_batch = batch;
  if (finished) peer.finished = true;
  AdmissionFields admission;
  admission.clock = decision.clock;
  admission.go = !finished;
  admission.finished = finished;
  admission.quota = batch;
  admission.epoch = static_cast<double>(decision.clock) * job_.GlobalBatch() /
                    job_.train_samples;
  admission.offset = finished ? 0 : decision.batch_offset;
  // The worker's push of this clock shows the shards this quota, sealed.
  if (!finished) {
    admission.quota_seal =
        tickets_.Seal({peer.rank, peer.incarnation, decision.clock, batch});
  }
  outbox_.Send(id, MakeAdmissionHeader(admission));
  if (finished) evaluation_.MaybeRequestFinal();
}

void ClockDriver::HandleClockDone(const Peer& peer,
                                  const wire::ClockDone& done) {
  const ClockReport report = ReadClockReport(static_cast<uint32_t>(peer.rank),
                                             done, peer.admitted_batch);
  // A push a shard refused (PushGuard) carried nothing into the model: its
  // samples and loss count nowhere.
  const bool refused = done.refused() > 0;
  const bool on_arrival = OnArrival();
  // A report of a clock committed without it (backup workers' late ones):
  // its push reached the shards either after the commit (dropped there) or
  // before it (buffered, then discarded by the commit); dropped either way.
  const bool late = !on_arrival && report.clock < policy_->CurrentClock();
  const uint32_t dropped_shards = late ? job_.servers : done.dropped();
  // Before the policy sees the report: a commit moves it to the next
  // clock's predictions.
  recorder_.RecordClock(report, done.staleness(), dropped_shards,
                        policy_->PredictedSpeed(report.worker, report.clock));
  if (on_arrival) {
    budget_.Reported(report.worker, report.batch);
    // Applied on arrival: the clock's samples count now (unless dropped),
    // at the job's global progress in clocks of X samples.
    const int64_t progress = ProgressClocks();
    if (done.dropped() == 0 && !refused) {
      recorder_.RecordCommit(progress - 1, report.batch, report.loss);
      // Every shard applied this push before acking it, so each has
      // reached at least this progress (its evaluation images with it).
      applied_samples_ += report.batch;
      evaluation_.Reached(static_cast<int64_t>(
          applied_samples_ / std::max<uint64_t>(1, job_.GlobalBatch())));
    }
    listener_.OnApplied(report.clock);
  } else {
    ledger_.Report(report.clock, report.worker, refused ? 0 : report.batch,
                   report.loss);
  }
  IssueCommits(Timed([&] { return policy_->OnClockDone(report); }));
  if (on_arrival) {
    // A round's clock is the newest every live worker finished. It is a
    // cut per shard, not across shards (each freezes when the start
    // reaches it): each shard records which pushes its part holds and its
    // own progress, the policy's clock table (with this report) where each
    // worker was; a restore replays nothing a shard holds.
    listener_.OnRoundPoint(policy_->CurrentClock() - 1, false);
  }
  AnswerPendingAdmissions();
}

void ClockDriver::IssueCommits(const std::vector<CommitDecision>& commits) {
  // Per commit, the Commit goes to every server before the round point:
  // a snapshot round started there lands behind it on each server's queue,
  // so every shard freezes the state after this commit.
  for (const auto& commit : commits) {
    zmq::message_t header = MakeCommitHeader(commit.clock, commit.workers);
    // Kept until every shard applied it: a promoted backup may need it
    // (ResendCommits).
    unapplied_commits_[commit.clock].assign(
        static_cast<const char*>(header.data()), header.size());
    outbox_.SendToEach(members_.server_ids(), header);
    const CommitLedger::Committed totals =
        ledger_.Commit(commit.clock, commit.workers);
    recorder_.RecordCommit(commit.clock, totals.samples, totals.mean_loss);
    SetLogClock(commit.clock);
    listener_.OnApplied(commit.clock);
    evaluation_.Reached(commit.clock + 1);
    listener_.OnRoundPoint(commit.clock, commit.clock + 1 == job_.max_clocks);
  }
}

void ClockDriver::AnswerPendingAdmissions() {
  for (const auto& id : members_.worker_ids()) {
    Peer& peer = members_.at(id);
    if (!peer.pending_admit) continue;
    // A worker deferred when the job ended is told so, not left waiting.
    if (Ended()) {
      SendFinished(id, peer, *peer.pending_admit);
      continue;
    }
    auto decision =
        Timed([&] { return policy_->Admit(peer.rank, *peer.pending_admit); });
    if (decision) SendAdmission(id, peer, *decision);
  }
}

void ClockDriver::HandleCommitted(const wire::Committed& committed) {
  ledger_.Ack(committed.clock(), committed.shard());
  std::erase_if(unapplied_commits_, [&](const auto& c) {
    return c.first <= ledger_.fully_applied();
  });
}

void ClockDriver::ResendCommits(const std::string& server, int64_t after) {
  for (const auto& [clock, bytes] : unapplied_commits_) {
    if (clock > after)
      outbox_.Send(server, zmq::message_t(bytes.data(), bytes.size()));
  }
}

}  // namespace lockstep
