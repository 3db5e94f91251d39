// Coordinator: the clock — admissions, reports, commits, evaluations.
#include <algorithm>

#include "common/logging.h"
#include "coordinator/coordinator.h"

namespace lockstep {

void Coordinator::HandleAdmit(const std::string& id, Peer& peer,
                              int64_t clock) {
  if (!training_ || clock < 0) {
    RejectBadMessage(id, FailedPrecondition("admission before training"));
    return;
  }
  if (peer.role == wire::Role::Evaluator) {
    peer.pending_admit = clock;  // evaluation points come in order
    AnswerEvaluator();
    return;
  }
  if (!recorder_started_) {
    // Time zero is the first admission request, after data loading.
    recorder_->Start();
    recorder_started_ = true;
  }
  if (peer.finished || Ended()) {
    SendFinished(id, peer, clock);
    return;
  }
  auto decision = Timed([&] { return policy_->Admit(peer.rank, clock); });
  if (decision) {
    SendAdmission(id, peer, *decision);
  } else {
    peer.pending_admit = clock;
  }
}

bool Coordinator::OnArrival() const {
  return policy_->apply_mode() == ApplyMode::kOnArrival;
}

bool Coordinator::Ended() const {
  if (OutOfTime()) return true;
  return OnArrival() ? budget_.Spent()
                     : policy_->CurrentClock() >= options_.job.max_clocks;
}

bool Coordinator::OutOfTime() const {
  return options_.job.budget_s > 0 && recorder_started_ &&
         recorder_->TrainSeconds() >= options_.job.budget_s;
}

int64_t Coordinator::FinalModelClock() const {
  // A job its time budget ended is read where training stopped (under BSP
  // a pull for max_clocks would wait for clocks never committed).
  if (!OutOfTime()) return options_.job.max_clocks;
  return OnArrival() ? ProgressClocks() : policy_->CurrentClock();
}

int64_t Coordinator::ProgressClocks() const {
  return static_cast<int64_t>(
      budget_.processed() / std::max<uint64_t>(1, options_.job.GlobalBatch()));
}

void Coordinator::SendFinished(const std::string& id, Peer& peer,
                               int64_t clock) {
  AdmissionDecision done;
  done.clock = std::max(clock, options_.job.max_clocks);
  SendAdmission(id, peer, done, /*done=*/true);
}

void Coordinator::SendAdmission(const std::string& id, Peer& peer,
                                const AdmissionDecision& decision, bool done) {
  peer.pending_admit.reset();
  const JobConfig& job = options_.job;
  // Apply-on-arrival jobs end on the sample budget (sample_budget.h), the
  // others after max_clocks clocks.
  const bool finished =
      done || (!OnArrival() && decision.clock >= job.max_clocks);
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
  // Evaluation is out of band (the evaluator's; AnswerEvaluator): no
  // training worker is ever asked to evaluate before the job is over.
  peer.clock = decision.clock;
  if (finished) peer.finished = true;
  flatbuffers::FlatBufferBuilder fbb(128);
  const double epoch = static_cast<double>(decision.clock) * job.GlobalBatch() /
                       job.train_samples;
  auto body = wire::CreateAdmission(
      fbb, decision.clock, !finished, finished, batch, epoch,
      finished ? 0 : decision.batch_offset, /*evaluate=*/false);
  Reply(id, FinishEnvelope(fbb, wire::Body::Admission, body.Union(),
                           wire::Role::Coordinator, 0));
  if (finished) MaybeRequestFinalEvaluation();
}

void Coordinator::HandleClockDone(Peer& peer, const wire::ClockDone& done) {
  ClockReport report;
  report.worker = static_cast<uint32_t>(peer.rank);
  report.clock = done.clock();
  report.batch = done.batch();
  report.compute_s = done.compute_s();
  report.push_s = done.push_s();
  report.pull_s = done.pull_s();
  report.wait_s = done.wait_s();
  report.loss = done.loss();
  report.cpu_available = done.cpu_available();
  report.mem_available = done.mem_available();
  const bool on_arrival = OnArrival();
  // A report of a clock committed without it (backup workers' late ones):
  // its push reached the shards either after the commit (dropped there) or
  // before it (buffered, then discarded by the commit); dropped either way.
  const bool late = !on_arrival && report.clock < policy_->CurrentClock();
  const uint32_t dropped_shards = late ? options_.job.servers : done.dropped();
  // Before the policy sees the report: a commit moves it to the next
  // clock's predictions.
  recorder_->RecordClock(report, done.staleness(), dropped_shards,
                         policy_->PredictedSpeed(report.worker, report.clock));
  if (on_arrival) {
    budget_.Reported(report.worker, report.batch);
    // Applied on arrival: the clock's samples count now (unless dropped),
    // at the job's global progress in clocks of X samples.
    const int64_t progress = ProgressClocks();
    if (done.dropped() == 0) {
      recorder_->RecordCommit(progress - 1, report.batch, report.loss);
      // Every shard applied this push before acking it, so each has
      // reached at least this progress (its evaluation images with it).
      applied_samples_ += report.batch;
      ProgressReached(static_cast<int64_t>(
          applied_samples_ /
          std::max<uint64_t>(1, options_.job.GlobalBatch())));
    }
    LogFirstCommitAfterRecovery(report.clock);
  } else {
    ledger_.Report(report.clock, report.worker, report.batch, report.loss);
  }
  IssueCommits(Timed([&] { return policy_->OnClockDone(report); }));
  if (on_arrival) {
    // A round's clock is the newest every live worker finished. It is a
    // cut per shard, not across shards (each freezes when the start
    // reaches it): each shard records which pushes its part holds and its
    // own progress, the policy's clock table (with this report) where each
    // worker was; a restore replays nothing a shard holds.
    MaybeStartRound(policy_->CurrentClock() - 1, false);
  }
  AnswerPendingAdmissions();
}

void Coordinator::IssueCommits(const std::vector<CommitDecision>& commits) {
  for (const auto& commit : commits) {
    flatbuffers::FlatBufferBuilder fbb(256);
    auto workers = fbb.CreateVector(commit.workers);
    const double lr = schedule_.RateAt(commit.clock);
    auto body = wire::CreateCommit(fbb, commit.clock, workers, lr);
    zmq::message_t header = FinishEnvelope(
        fbb, wire::Body::Commit, body.Union(), wire::Role::Coordinator, 0);
    SendToServers(header);
    const CommitLedger::Committed totals =
        ledger_.Commit(commit.clock, commit.workers);
    recorder_->RecordCommit(commit.clock, totals.samples, totals.mean_loss);
    SetLogClock(commit.clock);
    LogFirstCommitAfterRecovery(commit.clock);
    ProgressReached(commit.clock + 1);
    MaybeStartRound(commit.clock, commit.clock + 1 == options_.job.max_clocks);
  }
}

void Coordinator::LogFirstCommitAfterRecovery(int64_t clock) {
  if (!first_commit_pending_) return;
  first_commit_pending_ = false;
  LS_LOG(Warning) << "first commit after the recovery: clock " << clock << ", "
                  << NowSeconds() - recovery_started_s_
                  << " s after the server was lost";
}

void Coordinator::AnswerPendingAdmissions() {
  for (const auto& id : worker_ids_) {
    Peer& peer = peers_[id];
    if (!peer.pending_admit) continue;
    if (Ended()) {
      SendFinished(id, peer, *peer.pending_admit);
      continue;
    }
    auto decision =
        Timed([&] { return policy_->Admit(peer.rank, *peer.pending_admit); });
    if (decision) SendAdmission(id, peer, *decision);
  }
}

void Coordinator::HandleCommitted(const wire::Committed& committed) {
  ledger_.Ack(committed.clock());
}

void Coordinator::HandleEvaluation(const std::string& id,
                                   const wire::Evaluation& eval) {
  const bool final = eval.final();
  const int64_t clock = eval.clock();
  // A point's time is when training reached it; the final model's, when
  // training ended.
  const double reached =
      final ? recorder_->TrainSeconds()
            : evaluations_.ReachedAt(clock).value_or(recorder_->WallSeconds());
  evaluations_.Reported(clock);
  recorder_->RecordEvaluation(clock, eval.test_loss(), eval.test_accuracy(),
                              final, eval.seconds(), reached);
  LS_LOG(Info) << "evaluation at clock " << clock << ": test loss "
               << eval.test_loss() << ", test accuracy " << eval.test_accuracy()
               << " over " << eval.samples() << " samples (" << eval.seconds()
               << " s" << (final ? ", final)" : ")");
  if (final && id == final_evaluator_) final_eval_received_ = true;
}

void Coordinator::ProgressReached(int64_t progress) {
  evaluations_.Reached(progress, recorder_->WallSeconds());
  AnswerEvaluator();
}

void Coordinator::AnswerEvaluator() {
  if (evaluator_id_.empty()) return;
  Peer& peer = peers_[evaluator_id_];
  if (!peer.pending_admit || !peer.started || recovering_) return;
  std::optional<int64_t> point = evaluations_.TakeNext();
  const bool final = !point && training_over_;
  if (!point && !final) return;
  peer.pending_admit.reset();
  if (final) {
    final_evaluator_ = evaluator_id_;
    LS_LOG(Info) << "training is over; the evaluator runs the final "
                    "evaluation";
  }
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateAdmission(fbb, point.value_or(FinalModelClock()),
                                    !final, final, 0, 0, 0, /*evaluate=*/true);
  Reply(evaluator_id_, FinishEnvelope(fbb, wire::Body::Admission, body.Union(),
                                      wire::Role::Coordinator, 0));
}

}  // namespace lockstep
