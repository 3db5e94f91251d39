#include "server/replication/primary_replicas.h"

#include <utility>

namespace lockstep {

void PrimaryReplicas::Stop() {
  range_.data_path->set_replicas(nullptr);
  stream_.reset();
}

void PrimaryReplicas::Serve(const std::vector<std::string>& backups,
                            bool joining) {
  if (stream_ == nullptr) {
    stream_ = std::make_unique<ReplicaStream>(range_.shard, range_.port);
    range_.data_path->set_replicas(stream_.get());
    range_.model->set_keep_gradient(true);
    // The backups start from the same state (built, restored, or copied).
    readable_ = range_.clock->applied();
    commit_steps_.clear();
  }
  stream_->Expect(backups, joining);
  AdvanceReadable();
}

void PrimaryReplicas::RecordCommit(const Message& msg, uint32_t pushes) {
  const ShardModel::Gradient g = range_.model->applied_gradient();
  Message step;
  step.header.copy(const_cast<zmq::message_t&>(msg.header));
  if (pushes > 0) {
    step.payloads.emplace_back(g.dense.data(), g.dense.size_bytes());
    step.payloads.emplace_back(g.sparse_ids.data(), g.sparse_ids.size_bytes());
    step.payloads.emplace_back(g.sparse.data(), g.sparse.size_bytes());
  }
  const uint64_t seq = stream_->Record(wire::ReplicaStep::Commit, step,
                                       wire::PushStatus::Applied, 0, pushes,
                                       range_.data_path->norm_scale());
  commit_steps_.push_back(
      {seq, msg.envelope->body_as_Commit()->clock(), pushes});
  AdvanceReadable();
}

Status PrimaryReplicas::HandleAck(
    const std::string& peer, const wire::ReplicaAck& ack,
    const std::function<StatusOr<Message>()>& copy) {
  LS_RETURN_IF_ERROR(stream_->HandleAck(peer, ack, copy));
  AdvanceReadable();
  return Status::Ok();
}

void PrimaryReplicas::AdvanceReadable() {
  if (stream_ == nullptr || range_.clock->on_arrival()) return;
  const uint64_t held = stream_->HeldByAll();
  while (!commit_steps_.empty() && commit_steps_.front().seq <= held) {
    readable_ = commit_steps_.front().clock;
    committed_(readable_, commit_steps_.front().pushes);
    commit_steps_.pop_front();
  }
  range_.clock->set_readable(readable_);
}

}  // namespace lockstep
