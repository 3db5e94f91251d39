#include "server/hosted_shard.h"

#include "common/clock.h"
#include "common/http/process_health.h"
#include "common/logging.h"
#include "common/transport/transport_keys.h"
#include "common/wire/shard_messages.h"
#include "server/replication/range_copy.h"

namespace lockstep {

HostedShard::HostedShard(uint32_t shard, DataPort* port, Tell tell_coordinator)
    : shard_(shard),
      port_(port),
      tell_coordinator_(std::move(tell_coordinator)),
      data_path_(port, &model_, &clock_, &eval_images_, &updater_,
                 tell_coordinator_) {}

// Runs for the first welcome and again for each rollback's. The order
// matters: a round still being written watches the old stores, so it is
// dropped before the model is rebuilt; the model is built (empty when a
// round will overwrite it) before the restore fills it; and the updater
// starts its evaluation schedule from the progress the restore set.
Status HostedShard::Setup(const wire::Welcome& welcome, Timeline timeline,
                          bool primary) {
  data_path_.WaitForApply();
  rounds_.Drop(&model_);
  // A new timeline: the stream and the feed of the old one end.
  replicas_.Stop();
  follower_.Stop();
  model_.set_keep_gradient(false);
  awaiting_repush_ = false;
  promoted_ = false;
  deferred_commit_.reset();
  data_path_.ForgetPushes();
  primary_ = primary;
  now_ = std::move(timeline);
  const JobConfig& job = now_.job;
  const bool on_arrival = welcome.apply_mode() == wire::ApplyMode::OnArrival;
  clock_ = ShardClock(
      {on_arrival, welcome.max_staleness(), welcome.scale_lr_by_staleness()});
  LS_ASSIGN_OR_RETURN(LrSchedule schedule, job.LearningRateSchedule());
  updater_.Reset(job, on_arrival, schedule);
  // Only a primary that starts the job sees the scale of its outlier bound.
  ConfigureDataPath(on_arrival, primary && welcome.restore_round() == 0 &&
                                    welcome.adopt_clock() < 0);
  LS_RETURN_IF_ERROR(model_.Build(job, now_.layout, shard_, on_arrival,
                                  /*restoring=*/welcome.restore_round() > 0));
  LS_RETURN_IF_ERROR(
      RestoreFromWelcome(welcome.restore_round(), welcome.restore_shards()));
  updater_.Start(job.eval_every);
  return Status::Ok();
}

void HostedShard::ConfigureDataPath(bool on_arrival, bool from_start,
                                    double scale) {
  const JobConfig& job = now_.job;
  // A server's key seals: its data port could not have bound otherwise.
  auto seal = InstalledFactSeal();
  data_path_.Configure({shard_,
                        job.MaxWorkers(),
                        now_.epoch,
                        now_.layout.sparse_dim(),
                        on_arrival,
                        ShardKeys(now_.layout, shard_),
                        {job.max_grad_norm, job.grad_norm_action == "clip",
                         job.norm_outlier_factor, from_start},
                        job.MaxPushBatch(),
                        seal.ok() ? *seal : nullptr,
                        now_.layout.num_shards()});
  data_path_.SeedNormScale(scale);
}

Status HostedShard::Adopt(const wire::Welcome& welcome, Timeline timeline) {
  data_path_.WaitForApply();
  if (!(timeline.layout.shards()[shard_].dense ==
        now_.layout.shards()[shard_].dense)) {
    return FailedPrecondition("asked to keep a shard of another layout");
  }
  // The resumed job's learning rate (a resume may change it).
  LS_ASSIGN_OR_RETURN(LrSchedule schedule, timeline.job.LearningRateSchedule());
  if (!primary_) {
    now_ = std::move(timeline);
    updater_.set_schedule(schedule);
    ConfigureDataPath(clock_.on_arrival(),
                      false);  // its follower keeps the scale
    return Status::Ok();
  }
  if (welcome.adopt_clock() != clock_.applied()) {
    return FailedPrecondition("asked to keep shard " + std::to_string(shard_) +
                              " at clock " +
                              std::to_string(welcome.adopt_clock()) +
                              ", but this server holds it at clock " +
                              std::to_string(clock_.applied()));
  }
  rounds_.Drop(&model_);
  now_ = std::move(timeline);
  updater_.set_schedule(schedule);
  clock_.DropPending();
  data_path_.ForgetPushes();
  // The same process serves on: its outlier bound as it was.
  ConfigureDataPath(clock_.on_arrival(), data_path_.guard().learns_scale(),
                    data_path_.norm_scale());
  rounds_.Open(now_.job.snapshot_dir, shard_, now_.job.snapshot_full_every);
  LS_LOG(Warning) << "kept shard " << shard_ << "'s state at clock "
                  << clock_.applied() << ": the resumed coordinator adopted it";
  return Status::Ok();
}

Status HostedShard::RestoreFromWelcome(uint64_t round, uint32_t shards) {
  const JobConfig& job = now_.job;
  if (round > 0) {
    if (job.snapshot_dir.empty()) {
      return InvalidArgument("welcome asks to restore without a snapshot_dir");
    }
    const double start = NowSeconds();
    // Reading a large round takes as long as it takes: not a hung loop.
    const ProcessHealth::Busy restoring;
    auto restored =
        ShardRounds::Restore(job.snapshot_dir, round, shards, now_.layout,
                             shard_, job.optimizer, &model_);
    if (!restored.ok()) {
      // This range serves nothing meanwhile: what it holds is neither the
      // round nor a fresh model.
      TellCoordinator(
          MakeRestoreFailedHeader(restored.status(), round, shard_));
      data_path_.Hold();
      return Status::Ok();
    }
    updater_.Restored(*restored);
    data_path_.SeedNormScale(restored->norm_scale);
    LS_LOG(Info) << "restored round " << round << " (clock " << restored->clock
                 << ", step " << restored->step << ") from " << shards
                 << " shard stores: " << restored->bytes_read / 1e6 << " MB in "
                 << NowSeconds() - start << " s";
  }
  // A backup writes no rounds: its primary does (and, once promoted, so
  // does it).
  if (primary_) rounds_.Open(job.snapshot_dir, shard_, job.snapshot_full_every);
  // A rollback's welcome (epoch > 0) is answered once this shard holds the
  // round: the coordinator resumes the workers only when every shard has
  // said so, and it drops data requests of other epochs meanwhile.
  if (now_.epoch > 0) {
    TellCoordinator(
        MakeRestoredHeader(shard_, now_.epoch, round, clock_.applied()));
  }
  return Status::Ok();
}

void HostedShard::StartRound(const wire::SnapshotStart& start) {
  data_path_.WaitForApply();
  if (auto failed = rounds_.Start(RoundMeta(start.round(), start.clock()),
                                  start.keep_from(), &model_)) {
    SendSnapshotDone(*failed);
  }
}

ShardRoundMeta HostedShard::RoundMeta(uint64_t round, int64_t clock) const {
  ShardRoundMeta meta;
  meta.round = round;
  meta.clock = clock;
  meta.shard = shard_;
  meta.layout = now_.layout;
  meta.job = now_.job;
  meta.optimizer = now_.job.optimizer;
  meta.state_slots = model_.optimizer().state_slots();
  meta.step = model_.dense().step();
  meta.time = model_.dense().time();
  meta.sparse_rows = model_.sparse() ? model_.sparse()->rows() : 0;
  meta.contained = updater_.contained();
  meta.unix_time = UnixSeconds();
  meta.norm_scale = data_path_.norm_scale();
  return meta;
}

StatusOr<Message> HostedShard::LiveCopy() {
  data_path_.WaitForApply();
  const double start = NowSeconds();
  Message copy;
  LS_ASSIGN_OR_RETURN(
      copy.payloads,
      RangeCopy::Take(model_, RoundMeta(RangeCopy::kRound, clock_.applied())));
  LS_LOG(Info) << "took a live copy of shard " << shard_ << " at clock "
               << clock_.applied() << " in " << NowSeconds() - start << " s";
  return copy;
}

void HostedShard::FinishRound() {
  data_path_.WaitForApply();  // Finish un-watches the stores
  if (auto report = rounds_.Finish(&model_)) SendSnapshotDone(*report);
}

void HostedShard::SendSnapshotDone(const ShardRounds::Report& report) {
  if (!report.status.ok()) {
    LS_LOG(Error) << "snapshot round " << report.round
                  << " failed: " << report.status.message();
  } else {
    LS_LOG(Debug) << "snapshot round " << report.round
                  << " durable: " << report.bytes << " bytes in "
                  << report.write_s << " s"
                  << (report.parent == 0
                          ? std::string(" (full)")
                          : " (changes since round " +
                                std::to_string(report.parent) + ")");
  }
  TellCoordinator(MakeSnapshotDoneHeader(report, shard_));
}

// Committed goes out only after the update is applied, so a clock the
// coordinator counts as committed by every shard is one each of them holds.
// A commit this shard already applied (sent again) changes nothing and is
// not answered twice.
Status HostedShard::Commit(const Message& msg) {
  const wire::Commit& commit = *msg.envelope->body_as_Commit();
  data_path_.WaitForApply();
  const std::vector<uint32_t> missing =
      awaiting_repush_ && !clock_.IsApplied(commit.clock())
          ? MissingPushes(commit)
          : std::vector<uint32_t>();
  if (!missing.empty()) {
    // Promoted before the lost primary passed this commit on: its pushes
    // come again from their workers (PsClient keeps its last push).
    if (!deferred_commit_) {
      deferred_since_s_ = NowSeconds();
      LS_LOG(Warning) << "shard " << shard_ << " holds the commit of clock "
                      << commit.clock() << " for " << missing.size()
                      << " pushes its workers send again";
    }
    deferred_commit_.emplace();
    deferred_commit_->header.copy(const_cast<zmq::message_t&>(msg.header));
    return VerifyHeader(&*deferred_commit_);
  }
  if (!on_arrival() && !clock_.IsApplied(commit.clock())) {
    awaiting_repush_ = false;  // whole from now on
  }
  LS_ASSIGN_OR_RETURN(const std::optional<uint32_t> pushes,
                      updater_.ApplyCommit(commit));
  if (!pushes) {
    // A repeated commit. A promoted range answers one the coordinator sent
    // again: its lost primary may not have (the ledger counts it once).
    if (promoted_) SendCommitted(commit.clock(), 0);
    return Status::Ok();
  }
  if (replicas_.active()) {
    // Committed once every backup holds it: until then the coordinator
    // keeps the commit to send a promoted backup again.
    replicas_.RecordCommit(msg, *pushes);
  } else {
    SendCommitted(commit.clock(), *pushes);
  }
  data_path_.ServeDeferredPulls();
  return Status::Ok();
}

void HostedShard::SendCommitted(int64_t clock, uint32_t pushes) {
  TellCoordinator(MakeCommittedHeader(shard_, clock, pushes));
}

std::vector<uint32_t> HostedShard::MissingPushes(const wire::Commit& commit) {
  std::vector<uint32_t> workers, missing;
  if (commit.workers() != nullptr) {
    workers.assign(commit.workers()->begin(), commit.workers()->end());
  }
  (void)clock_.Committed(commit.clock(), workers, &missing);
  return missing;
}

Status HostedShard::RetryDeferredCommit() {
  if (!deferred_commit_) return Status::Ok();
  const auto& commit = *deferred_commit_->envelope->body_as_Commit();
  const std::vector<uint32_t> missing = MissingPushes(commit);
  if (!missing.empty() && NowSeconds() - deferred_since_s_ < kRepushWaitS) {
    return Status::Ok();
  }
  if (!missing.empty()) {
    LS_LOG(Error) << "shard " << shard_ << " applies commit of clock "
                  << commit.clock() << " without " << missing.size()
                  << " pushes: their workers did not send them again within "
                  << kRepushWaitS << " s of the promotion";
  }
  Message msg = std::move(*deferred_commit_);
  deferred_commit_.reset();
  awaiting_repush_ = false;
  return Commit(msg);
}

std::string HostedShard::Totals() {
  data_path_.WaitForApply();
  return "shard " + std::to_string(shard_) + " holds " +
         std::to_string(model_.dense().step()) + " optimizer steps (" +
         (clock_.on_arrival() ? "one per push applied" : "one per commit") +
         "), clock " + std::to_string(clock_.applied()) + ", " +
         std::to_string(clock_.dropped()) + " pushes dropped";
}

void HostedShard::ServeReplicas(const std::vector<std::string>& backups,
                                bool joining) {
  if (backups.empty() && !replicas_.active()) return;
  replicas_.Serve(backups, joining);
  data_path_.ServeDeferredPulls();
}

Status HostedShard::Promote(const std::vector<std::string>& backups) {
  data_path_.WaitForApply();
  if (!primary_) {
    primary_ = true;
    promoted_ = true;
    awaiting_repush_ = !clock_.on_arrival();
    const uint64_t steps = follower_.steps_applied();
    // Pushes are bounded by the scale its primary had learnt.
    data_path_.SeedNormScale(follower_.norm_scale());
    follower_.Stop();
    rounds_.Open(now_.job.snapshot_dir, shard_, now_.job.snapshot_full_every);
    LS_LOG(Warning) << "promoted: this server serves shard " << shard_
                    << " from its backup (" << steps
                    << " steps of its primary applied, clock "
                    << clock_.applied() << ")";
  }
  ServeReplicas(backups, /*joining=*/true);
  TellCoordinator(MakePromotedHeader(shard_, clock_.applied()));
  return Status::Ok();
}

Status HostedShard::HandleReplicaAck(const std::string& peer,
                                     const wire::ReplicaAck& ack) {
  if (!primary_ || !replicas_.active()) {
    return FailedPrecondition("shard " + std::to_string(shard_) +
                              " has no backups here to acknowledge");
  }
  LS_RETURN_IF_ERROR(
      replicas_.HandleAck(peer, ack, [this] { return LiveCopy(); }));
  data_path_.ServeDeferredPulls();
  return Status::Ok();
}

}  // namespace lockstep
