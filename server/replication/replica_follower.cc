#include "server/replication/replica_follower.h"

#include <vector>

#include "common/clock.h"
#include "common/logging.h"
#include "common/wire/shard_messages.h"
#include "server/replication/range_copy.h"

namespace lockstep {

void ReplicaFollower::Follow(const std::string& primary, const std::string& own,
                             double timeout_s) {
  feed_ = std::make_unique<ReplicaFeed>(shard_, primary, own, timeout_s);
  steps_applied_ = 0;
  norm_scale_ = 0;
}

Status ReplicaFollower::TakeSteps() {
  if (feed_ == nullptr) return Status::Ok();
  auto ready = feed_->Ready();
  Status feeding = ready.status();
  // Every step queued is held once received: acknowledged first (the
  // primary's replies wait on it), then applied (this server applies each
  // before anything else, and before a promotion).
  std::vector<std::pair<Message, Message>> steps;
  while (feeding.ok() && *ready) {
    Message step, original;
    auto got = feed_->Next(&step, &original);
    if (!got.ok()) {
      feeding = got.status();
      break;
    }
    if (!*got) {
      feeding = feed_->AckHeld();
      break;
    }
    steps.emplace_back(std::move(step), std::move(original));
  }
  for (auto& [step, original] : steps) {
    LS_RETURN_IF_ERROR(ApplyStep(step, original));
  }
  if (!feeding.ok()) {
    // The primary is gone (or its stream broke): this state stays as the
    // last step left it until the coordinator promotes it or rolls back.
    const std::string why = "backup of shard " + std::to_string(shard_) +
                            " lost its primary's feed after step " +
                            std::to_string(feed_->applied()) + ": " +
                            feeding.message();
    LS_LOG(Warning) << why;
    const std::string primary = feed_->primary();
    feed_.reset();
    // Only a closed (or unreachable) primary is reported, not one that
    // refused this backup: its server may well live.
    if (feeding.code() != StatusCode::kUnavailable &&
        feeding.code() != StatusCode::kDeadlineExceeded) {
      return Status::Ok();
    }
    // The coordinator need not wait out the liveness limit to promote.
    flatbuffers::FlatBufferBuilder fbb(256);
    auto body = wire::CreateError(fbb, wire::ErrorCode::PrimaryLost,
                                  fbb.CreateString(why), shard_,
                                  fbb.CreateString(primary));
    tell_(FinishEnvelope(fbb, wire::Body::Error, body.Union(),
                         wire::Role::Server, static_cast<int>(shard_)));
  }
  return Status::Ok();
}

Status ReplicaFollower::ApplyStep(Message& step, Message& original) {
  // A move may relocate a small header's bytes: verified again.
  LS_RETURN_IF_ERROR(VerifyHeader(&step));
  if (original.header.size() > 0) {
    LS_RETURN_IF_ERROR(VerifyHeader(&original));
  }
  const auto* replicate = step.envelope->body_as_Replicate();
  if (replicate == nullptr) return InvalidArgument("not a replica step");
  if (replicate->step() != wire::ReplicaStep::Install &&
      original.envelope == nullptr) {
    return InvalidArgument("a replica step without its message");
  }
  LS_RETURN_IF_ERROR(
      (replicate->step() == wire::ReplicaStep::Install
           ? Install(step.payloads)
           : Apply(*replicate, original))
          .WithContext("backup of shard " + std::to_string(shard_)));
  ++steps_applied_;
  if (replicate->norm_scale() > 0) norm_scale_ = replicate->norm_scale();
  return Status::Ok();
}

Status ReplicaFollower::Install(const std::vector<zmq::message_t>& frames) {
  const double start = NowSeconds();
  LS_ASSIGN_OR_RETURN(
      const RestoredShard restored,
      RangeCopy::Install(frames, *layout_, shard_, job_->optimizer, model_));
  updater_->Restored(restored);
  updater_->Start(job_->eval_every);
  norm_scale_ = restored.norm_scale;
  // Now a copy the coordinator may promote.
  tell_(MakeBackupReadyHeader(shard_));
  LS_LOG(Info) << "backup of shard " << shard_
               << " installed its primary's live copy (clock " << restored.clock
               << ", " << restored.bytes_read / 1e6 << " MB) in "
               << NowSeconds() - start << " s";
  return Status::Ok();
}

Status ReplicaFollower::Apply(const wire::Replicate& step, Message& original) {
  switch (step.step()) {
    case wire::ReplicaStep::Push:
      return ApplyPush(step, original);
    case wire::ReplicaStep::Commit:
      return ApplyCommit(step, original);
    default:
      // An Install is taken before a step is applied (TakeSteps).
      return InvalidArgument("unexpected replica step");
  }
}

// The commit as its primary applied it: the same gradient, the same
// bookkeeping (ShardUpdater::ApplyReplicatedCommit).
Status ReplicaFollower::ApplyCommit(const wire::Replicate& step,
                                    const Message& original) {
  const auto* commit = original.envelope->body_as_Commit();
  if (commit == nullptr) return InvalidArgument("a commit step without it");
  ShardModel::Gradient gradient;
  std::vector<float> dense_scratch, sparse_scratch;
  std::vector<uint64_t> id_scratch;
  if (step.pushes() > 0) {
    if (original.payloads.size() != 3) {
      return InvalidArgument("a commit step without its gradient");
    }
    const auto& frames = original.payloads;
    LS_ASSIGN_OR_RETURN(
        gradient.dense,
        PayloadAs<float>(frames[0], frames[0].size() / sizeof(float),
                         &dense_scratch));
    LS_ASSIGN_OR_RETURN(
        gradient.sparse_ids,
        PayloadAs<uint64_t>(frames[1], frames[1].size() / sizeof(uint64_t),
                            &id_scratch));
    LS_ASSIGN_OR_RETURN(
        gradient.sparse,
        PayloadAs<float>(frames[2], frames[2].size() / sizeof(float),
                         &sparse_scratch));
  }
  return updater_->ApplyReplicatedCommit(*commit, step.pushes(), gradient)
      .status();
}

// The primary's path for the same push on arrival
// (ShardDataPath::AdmitAndApply), with its answer taken from the step:
// skipped when a restored round holds it, applied at the primary's
// staleness, or counted as dropped. Under a commit policy a backup gets
// each commit's gradient instead.
Status ReplicaFollower::ApplyPush(const wire::Replicate& step,
                                  Message& original) {
  const auto* push = original.envelope->body_as_Push();
  if (push == nullptr) return InvalidArgument("a push step without its push");
  if (!clock_->on_arrival()) {
    return InvalidArgument("a push step under a commit policy");
  }
  // What the primary's rules admitted (server/guard/request_rules.h): a batch
  // beyond the job's would be billions of optimizer steps here.
  const uint64_t max_batch = job_->MaxPushBatch();
  if (max_batch > 0 && push->batch() > max_batch) {
    return InvalidArgument(
        "a push step with batch " + std::to_string(push->batch()) +
        ", above the job's largest, " + std::to_string(max_batch));
  }
  BufferedPush record;
  LS_RETURN_IF_ERROR(data_path_->CheckPush(original, &record));
  const auto worker = static_cast<uint32_t>(original.envelope->sender_rank());
  PushLedger::Answer answer{push->request_id(), push->clock(), step.status(),
                            step.staleness()};
  record.msg = std::move(original);
  if (!updater_->AlreadyContained(worker, answer.clock)) {
    if (answer.status == wire::PushStatus::Applied) {
      updater_->ApplyOnArrival(record, answer.clock, answer.staleness);
    } else {
      clock_->CountDrop();
    }
  }
  data_path_->ledger().Remember(worker, answer);
  return Status::Ok();
}

}  // namespace lockstep
