#include "server/replica_steps.h"

#include <vector>

namespace lockstep {

Status ReplicaSteps::Apply(const wire::Replicate& step, Message& original) {
  switch (step.step()) {
    case wire::ReplicaStep::Push:
      return ApplyPush(step, original);
    case wire::ReplicaStep::Commit:
      return ApplyCommit(step, original);
    case wire::ReplicaStep::Adopt:
      clock_->DropPending();
      data_path_->ledger().Clear();
      return Status::Ok();
    default:
      // An Install is the range's own (HostedShard::InstallCopy).
      return InvalidArgument("unexpected replica step");
  }
}

// The commit as its primary applied it: the same gradient, the same
// bookkeeping (ShardUpdater::ApplyReplicatedCommit).
Status ReplicaSteps::ApplyCommit(const wire::Replicate& step,
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

// The primary's path for the same push (ShardDataPath::HandlePush), with
// its answer taken from the step: buffered for its commit, or, on
// arrival, skipped when a restored round holds it, applied at the
// primary's staleness, or counted as dropped.
Status ReplicaSteps::ApplyPush(const wire::Replicate& step, Message& original) {
  const auto* push = original.envelope->body_as_Push();
  if (push == nullptr) return InvalidArgument("a push step without its push");
  BufferedPush record;
  LS_RETURN_IF_ERROR(data_path_->CheckPush(original, &record));
  const auto worker = static_cast<uint32_t>(original.envelope->sender_rank());
  PushLedger::Answer answer{push->request_id(), push->clock(), step.status(),
                            step.staleness()};
  record.msg = std::move(original);
  if (!clock_->on_arrival()) {
    answer.status = clock_->Buffer(answer.clock, worker, std::move(record));
  } else if (!updater_->AlreadyContained(worker, answer.clock)) {
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
