#include "coordinator/rounds/snapshot_rounds.h"

#include "common/clock.h"
#include "common/logging.h"
#include "common/wire/message.h"
#include "common/wire/shard_messages.h"

namespace lockstep {
namespace {

// How long a finished job waits for the round in flight to be reported.
constexpr double kSettleSeconds = 60;

}  // namespace

Status SnapshotRounds::SetUp(bool resume, uint64_t resume_round,
                             bool if_present) {
  if (job_.snapshot_dir.empty()) {
    if (job_.snapshots()) {
      return InvalidArgument(
          "--snapshot-every-clocks / --snapshot-every-s need --snapshot-dir");
    }
    if (resume) return InvalidArgument("resuming needs --snapshot-dir");
    return Status::Ok();
  }
  auto loaded = SnapshotManifest::Load(job_.snapshot_dir);
  if (if_present) {
    resume = loaded.ok() && loaded->LatestComplete() != nullptr;
    LS_LOG(Info) << (resume ? "resuming from " : "no complete round in ")
                 << job_.snapshot_dir << (resume ? "" : ": a new job");
    if (!resume && loaded.ok()) loaded = NotFound("no complete round");
  }
  // A new job never writes over another job's manifest (its rounds would
  // be lost), and only a missing manifest counts as none: a corrupt one is
  // an error, not a reason to start afresh.
  if (!resume) {
    if (loaded.ok()) {
      return FailedPrecondition(
          job_.snapshot_dir +
          " already holds the snapshots of a job; resume it, or give a "
          "fresh --snapshot-dir");
    }
    if (loaded.status().code() != StatusCode::kNotFound) {
      return loaded.status();
    }
    manifest_ = SnapshotManifest(job_);
  } else {
    if (!loaded.ok()) return loaded.status().WithContext("cannot resume");
    manifest_ = std::move(loaded).value();
    const ManifestRound* round = resume_round > 0 ? manifest_.Find(resume_round)
                                                  : manifest_.LatestComplete();
    if (round == nullptr || !round->complete) {
      return NotFound("cannot resume: " + job_.snapshot_dir + " has " +
                      (resume_round > 0
                           ? "no complete round " + std::to_string(resume_round)
                           : std::string("no complete round")));
    }
    // A round named on purpose runs its clocks again, whatever the job's
    // end was.
    const Status can = resume_round > 0
                           ? CheckResumeChanges(manifest_.job(), job_)
                           : manifest_.CheckResumableBy(job_);
    if (!can.ok()) return can.WithContext("cannot resume " + job_.snapshot_dir);
    restore_ = *round;
    // The job as resumed (flags given on resume may change it), so a later
    // resume continues this job; it has not run to its end.
    manifest_.set_job(job_);
    manifest_.set_finished_clock(-1);
  }
  // A resumed job's schedule counts from the round it restored. The
  // manifest is written now, so a snapshot folder that cannot be written
  // fails the job at its start, not at its first round.
  rounds_ = RoundTracker(job_.snapshot_every_clocks, job_.snapshot_every_s,
                         NowSeconds(), restore_ ? restore_->clock : -1);
  return manifest_.Save(job_.snapshot_dir);
}

void SnapshotRounds::MaybeStartRound(int64_t clock, bool force) {
  if (job_.snapshot_dir.empty() || !job_.snapshots() || clock < 0) return;
  // One round at a time: the job's last round waits for the one in flight
  // (FinishRound starts it), and the state after the last clock does not
  // change meanwhile.
  if (force && rounds_.in_flight()) {
    final_round_clock_ = clock;
    return;
  }
  if (!force && !rounds_.Due(clock, NowSeconds())) return;
  StartRound(clock);
}

void SnapshotRounds::StartRound(int64_t clock) {
  const double now = NowSeconds();
  const uint64_t round =
      manifest_.NextRound(restore_ ? restore_->round + 1 : 1);
  // Rounds older than the newest snapshot_keep complete ones go; the one
  // starting now is not complete yet, so keep one more until it is.
  SnapshotManifest kept = manifest_;
  const uint64_t keep_from = kept.Prune(job_.snapshot_keep);
  // The policy's state now is its state after `clock`: rounds start when
  // `clock` is committed (or the newest committed one, for a requested
  // round); under apply-on-arrival policies the clock table is where each
  // worker was when the shards' cuts begin.
  ManifestRound started;
  started.round = round;
  started.clock = clock;
  started.shards = context_.Shards();
  started.unix_time = UnixSeconds();
  started.policy = context_.PolicyName();
  started.policy_state = context_.PolicyStateNow();
  started.train_s = context_.TrainSecondsNow();
  started.samples = context_.SamplesNow();
  rounds_.Begin(std::move(started), now);
  // A shard freezes its part when this reaches it: under commit policies
  // behind the Commit of `clock`, which was sent first
  // (ClockDriver::IssueCommits). Once its part is durable, it deletes its
  // rounds below keep_from.
  zmq::message_t header = MakeSnapshotStartHeader(round, clock, keep_from);
  outbox_.SendToEach(members_.server_ids(), header);
  LS_LOG(Debug) << "snapshot round " << round << " of clock " << clock
                << " started";
  if (preemption_pending_) {
    preemption_pending_ = false;
    preemption_round_ = round;
  }
  if (!round_requests_.empty()) {
    auto& waiting = round_waiters_[round];
    waiting.insert(waiting.end(), round_requests_.begin(),
                   round_requests_.end());
    round_requests_.clear();
  }
}

std::string SnapshotRounds::RoundRefusal() const {
  // During a recovery the state is being rolled back, and before the
  // first commit there is no state to take.
  if (job_.snapshot_dir.empty()) return "this job has no --snapshot-dir";
  if (context_.Recovering()) return "the job is recovering from a lost server";
  if (context_.LastCommittedClock() < 0) return "no clock is committed yet";
  return "";
}

void SnapshotRounds::HandleRoundRequest(const std::string& id) {
  const std::string refused = RoundRefusal();
  if (!refused.empty()) {
    outbox_.Send(id, MakeErrorHeader(wire::ErrorCode::NotReady,
                                     "no snapshot round now: " + refused, 0,
                                     wire::Role::Coordinator, 0));
    return;
  }
  const int64_t clock = context_.LastCommittedClock();
  LS_LOG(Info) << "a snapshot round was requested at clock " << clock;
  round_requests_.push_back(id);
  // One in flight: the next starts when it finishes (FinishRound).
  if (!rounds_.in_flight()) StartRound(clock);
}

std::string SnapshotRounds::StartPreemptionRound() {
  std::string refused = RoundRefusal();
  if (!refused.empty()) return refused;
  preemption_pending_ = true;
  // As a tool's round: after the one in flight, which may be older.
  if (!rounds_.in_flight()) StartRound(context_.LastCommittedClock());
  return "";
}

void SnapshotRounds::AnswerRoundRequests(const ManifestRound& round) {
  auto it = round_waiters_.find(round.round);
  if (it == round_waiters_.end()) return;
  for (const std::string& id : it->second) {
    flatbuffers::FlatBufferBuilder fbb(256);
    auto body =
        wire::CreateSnapshotDone(fbb, round.round, 0, round.clock, round.bytes,
                                 round.complete, fbb.CreateString(round.error));
    outbox_.Send(id, FinishEnvelope(fbb, wire::Body::SnapshotDone, body.Union(),
                                    wire::Role::Coordinator, 0));
  }
  round_waiters_.erase(it);
}

void SnapshotRounds::HandleSnapshotDone(const wire::SnapshotDone& done) {
  std::map<uint32_t, int64_t> contained;
  if (!ElementsAligned(done.contained())) {
    LS_LOG(Error) << "shard " << done.shard() << " sent round " << done.round()
                  << " with a misaligned cut: left out";
  } else if (done.contained() != nullptr) {
    for (const wire::PushCutEntry* e : *done.contained()) {
      contained[e->worker()] = e->clock();
    }
  }
  LS_LOG(Debug) << "shard " << done.shard() << " round " << done.round()
                << (done.ok() ? " durable" : " failed") << ": froze in "
                << done.freeze_ms() << " ms, wrote " << done.bytes()
                << " bytes in " << done.write_s() << " s, "
                << done.copied_on_apply() << " chunks copied on apply";
  auto finished = rounds_.Report(done.round(), done.shard(), done.ok(),
                                 flatbuffers::GetString(done.error()),
                                 done.bytes(), std::move(contained));
  if (finished) FinishRound(std::move(*finished));
}

void SnapshotRounds::FinishRound(ManifestRound round) {
  if (round.complete) {
    ++complete_;
    LS_LOG(Info) << "snapshot round " << round.round << " (clock "
                 << round.clock << ") complete: " << round.bytes / 1e6
                 << " MB over " << round.shards << " shards";
  } else {
    ++failed_;
    LS_LOG(Error) << "snapshot round " << round.round << " (clock "
                  << round.clock
                  << ") failed; older rounds stay: " << round.error;
  }
  // A requester hears of the round only once the manifest names it, so
  // what it reads next is the round it was told of.
  ManifestRound answer = round;
  manifest_.Record(std::move(round));
  manifest_.Prune(job_.snapshot_keep);
  // A round the manifest does not name is never restored, so it counts as
  // failed even though every shard wrote it.
  Status saved = manifest_.Save(job_.snapshot_dir);
  if (!saved.ok()) {
    ++failed_;
    LS_LOG(Error) << "snapshot manifest not updated: " << saved.message();
    answer.complete = false;
    answer.error = "the manifest was not updated: " + saved.message();
  }
  if (preemption_round_ == answer.round) preemption_result_ = answer;
  AnswerRoundRequests(answer);
  // No round is in flight now: the job's last round goes first, then one
  // a tool or a preemption asked for meanwhile (unless a recovery is under
  // way).
  if (final_round_clock_) {
    const int64_t clock = *final_round_clock_;
    final_round_clock_.reset();
    MaybeStartRound(clock, /*force=*/true);
  }
  if ((!round_requests_.empty() || preemption_pending_) &&
      !rounds_.in_flight() && !context_.Recovering()) {
    StartRound(context_.LastCommittedClock());
  }
}

RestoreFailure SnapshotRounds::HandleRestoreFailed(int shard, uint64_t round,
                                                   const std::string& why) {
  RestoreFailure result;
  // Only a failure of the round being restored counts; one of a round
  // given up already (an earlier rollback) is late news.
  const ManifestRound* entry = manifest_.Find(round);
  if (!Restoring(round) || entry == nullptr) return result;
  result.ignored = false;
  ManifestRound failed = *entry;
  failed.complete = false;
  failed.error = "restore on shard " + std::to_string(shard) + ": " + why;
  // Recorded failed, so no later resume picks this round again.
  manifest_.Record(std::move(failed));
  Status saved = manifest_.Save(job_.snapshot_dir);
  const ManifestRound* older = manifest_.LatestComplete();
  if (older != nullptr) {
    result.previous = *older;
    return result;
  }
  result.abort =
      Corruption("snapshot round " + std::to_string(round) +
                 " cannot be restored (" + why + "); it is marked failed" +
                 (older != nullptr
                      ? ", so resuming again continues from round " +
                            std::to_string(older->round) + " (clock " +
                            std::to_string(older->clock) + ")"
                      : std::string(", and no older complete round is left")) +
                 (saved.ok() ? ""
                             : "; but the manifest could not be updated: " +
                                   saved.message()));
  return result;
}

void SnapshotRounds::RecordResolvedJob() {
  if (job_.snapshot_dir.empty()) return;
  manifest_.set_job(job_);
  if (Status saved = manifest_.Save(job_.snapshot_dir); !saved.ok()) {
    LS_LOG(Error) << "the manifest does not record the resolved job: "
                  << saved.message();
  }
}

void SnapshotRounds::RecordFinished(int64_t clock) {
  if (job_.snapshot_dir.empty()) return;
  manifest_.set_finished_clock(clock);
  if (Status saved = manifest_.Save(job_.snapshot_dir); !saved.ok()) {
    LS_LOG(Error) << "the manifest does not say the job finished: "
                  << saved.message();
  }
}

bool SnapshotRounds::Settled() {
  // A finished job waits for the round in flight to be reported before its
  // peers are told to stop, so the manifest records it; but a shard that
  // never reports must not hold the job forever.
  if (!rounds_.in_flight()) return true;
  const double now = NowSeconds();
  if (settle_deadline_s_ == 0) {
    settle_deadline_s_ = now + kSettleSeconds;
    LS_LOG(Info) << "waiting for the last snapshot round to be written";
  }
  if (now < settle_deadline_s_) return false;
  if (auto abandoned = rounds_.Abandon("not reported within " +
                                       std::to_string(kSettleSeconds) +
                                       " s of the job's end")) {
    FinishRound(std::move(*abandoned));
  }
  return true;
}

void SnapshotRounds::AbandonForLoss(const std::string& why) {
  // Dropped before the abandoned round is finished: FinishRound would start
  // it, of the state being rolled back and with a shard gone.
  final_round_clock_.reset();
  if (auto abandoned = rounds_.Abandon(why)) FinishRound(std::move(*abandoned));
}

void SnapshotRounds::BeginRollback(const ManifestRound& round) {
  restore_ = round;
  // Tools waiting for a round to start: theirs would have been of the
  // timeline being undone.
  for (const std::string& tool : round_requests_) {
    outbox_.Send(tool, MakeErrorHeader(wire::ErrorCode::NotReady,
                                       "the job is rolling back; ask again", 0,
                                       wire::Role::Coordinator, 0));
  }
  round_requests_.clear();
}

void SnapshotRounds::FinishRollback() {
  rounds_ = RoundTracker(job_.snapshot_every_clocks, job_.snapshot_every_s,
                         NowSeconds(), restore_->clock);
}

}  // namespace lockstep
