// Coordinator: the clock — admissions, reports, commits, evaluations.
#include <algorithm>

#include "common/logging.h"
#include "server/coordinator/coordinator.h"

namespace lockstep {

void Coordinator::HandleAdmit(const std::string& id, Peer& peer,
                              int64_t clock) {
  if (!training_ || clock < 0) {
    RejectBadMessage(id, FailedPrecondition("admission before training"));
    return;
  }
  if (!recorder_started_) {
    // Time zero is the first admission request, after data loading.
    recorder_->Start();
    recorder_started_ = true;
  }
  if (peer.finished) {
    AdmissionDecision done;
    done.clock = options_.job.max_clocks;
    SendAdmission(id, peer, done);
    return;
  }
  auto decision = Timed([&] { return policy_->Admit(peer.rank, clock); });
  if (decision) {
    SendAdmission(id, peer, *decision);
  } else {
    peer.pending_admit = clock;
  }
}

void Coordinator::SendAdmission(const std::string& id, Peer& peer,
                                const AdmissionDecision& decision) {
  peer.pending_admit.reset();
  const JobConfig& job = options_.job;
  const bool finished = decision.clock >= job.max_clocks;
  const bool evaluate = !finished && job.eval_every > 0 && decision.clock > 0 &&
                        decision.clock % job.eval_every == 0 &&
                        peer.rank == Evaluator();
  peer.clock = decision.clock;
  if (finished) peer.finished = true;
  flatbuffers::FlatBufferBuilder fbb(128);
  const double epoch = static_cast<double>(decision.clock) * job.GlobalBatch() /
                       job.train_samples;
  auto body = wire::CreateAdmission(
      fbb, decision.clock, !finished, finished, finished ? 0 : decision.batch,
      epoch, finished ? 0 : decision.batch_offset, evaluate);
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
  recorder_->RecordClock(report, done.staleness(), done.dropped());
  const bool on_arrival = policy_->apply_mode() == ApplyMode::kOnArrival;
  if (on_arrival) {
    // Applied on arrival: the clock's samples count now (unless dropped).
    if (done.dropped() == 0) {
      recorder_->RecordCommit(report.clock, report.batch, report.loss);
    }
    LogFirstCommitAfterRecovery(report.clock);
  } else {
    ledger_.Report(report.clock, report.worker, report.batch, report.loss);
  }
  IssueCommits(Timed([&] { return policy_->OnClockDone(report); }));
  if (on_arrival) {
    // A round is a consistent cut, its clock the newest every live worker
    // finished; each shard records which pushes its part holds, the
    // policy's clock table (with this report) where each worker was.
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
    auto decision =
        Timed([&] { return policy_->Admit(peer.rank, *peer.pending_admit); });
    if (decision) SendAdmission(id, peer, *decision);
  }
}

void Coordinator::HandleCommitted(const wire::Committed& committed) {
  ledger_.Ack(committed.clock());
}

void Coordinator::HandleEvaluation(const Peer& peer,
                                   const wire::Evaluation& eval) {
  recorder_->RecordEvaluation(eval.clock(), eval.test_loss(),
                              eval.test_accuracy(), eval.final());
  LS_LOG(Info) << "evaluation at clock " << eval.clock() << ": test loss "
               << eval.test_loss() << ", test accuracy " << eval.test_accuracy()
               << " over " << eval.samples() << " samples"
               << (eval.final() ? " (final)" : "");
  if (eval.final() && peer.rank == final_evaluator_) {
    final_eval_received_ = true;
  }
}

}  // namespace lockstep
