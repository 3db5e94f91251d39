#include "server/replication/replica_stream.h"

#include <algorithm>

#include "common/logging.h"

namespace lockstep {
namespace {

// A frame sharing `frame`'s bytes (zmq_msg_copy: reference counted).
zmq::message_t Shared(const zmq::message_t& frame) {
  zmq::message_t copy;
  copy.copy(const_cast<zmq::message_t&>(frame));
  return copy;
}

}  // namespace

void ReplicaStream::Expect(const std::vector<std::string>& backups,
                           bool joining) {
  std::map<std::string, Backup> now;
  for (const std::string& endpoint : backups) {
    auto it = expected_.find(endpoint);
    Backup fresh;
    fresh.joining = joining;
    now[endpoint] = it != expected_.end() ? it->second : fresh;
  }
  for (const auto& [endpoint, backup] : expected_) {
    if (now.count(endpoint) == 0) {
      LS_LOG(Warning) << "shard " << shard_
                      << " no longer waits for its backup at " << endpoint
                      << " (it held step " << backup.held << " of "
                      << next_seq_ - 1 << ")";
    }
  }
  expected_ = std::move(now);
  Release();
}

uint64_t ReplicaStream::Record(wire::ReplicaStep step, const Message& original,
                               wire::PushStatus status, int64_t staleness,
                               uint32_t pushes, double norm_scale) {
  Step s;
  s.seq = next_seq_++;
  flatbuffers::FlatBufferBuilder fbb(96);
  auto body = wire::CreateReplicate(fbb, shard_, s.seq, step, status, staleness,
                                    pushes, norm_scale);
  s.header = FinishEnvelope(fbb, wire::Body::Replicate, body.Union(),
                            wire::Role::Server, static_cast<int>(shard_));
  s.original.header = Shared(original.header);
  for (const zmq::message_t& frame : original.payloads) {
    s.original.payloads.push_back(Shared(frame));
  }
  if (expected_.empty()) return s.seq;  // nobody to keep it for
  for (const auto& [endpoint, backup] : expected_) {
    if (!backup.peer.empty()) Send(backup.peer, s);
  }
  kept_.push_back(std::move(s));
  return kept_.back().seq;
}

void ReplicaStream::Send(const std::string& peer, Step& step) {
  Message out;
  out.peer = peer;
  out.header = Shared(step.header);
  out.payloads.push_back(Shared(step.original.header));
  for (const zmq::message_t& frame : step.original.payloads) {
    out.payloads.push_back(Shared(frame));
  }
  Status sent = port_->Send(std::move(out));
  if (!sent.ok()) {
    LS_LOG(Warning) << "replica step " << step.seq << " of shard " << shard_
                    << " not sent: " << sent.message();
  }
}

void ReplicaStream::SendWhenHeld(uint64_t seq, Message reply) {
  if (seq <= HeldByAll()) {
    Status sent = port_->Send(std::move(reply));
    if (!sent.ok()) LS_LOG(Warning) << "reply lost: " << sent.message();
    return;
  }
  replies_.emplace_back(seq, std::move(reply));
}

Status ReplicaStream::HandleAck(
    const std::string& peer, const wire::ReplicaAck& ack,
    const std::function<StatusOr<Message>()>& copy) {
  if (ack.seq() == 0) {
    // A (re)subscription, naming its server.
    const std::string endpoint = flatbuffers::GetString(ack.endpoint());
    auto it = expected_.find(endpoint);
    if (it == expected_.end()) {
      return FailedPrecondition("no backup of shard " + std::to_string(shard_) +
                                " lives at " + endpoint);
    }
    Backup& backup = it->second;
    backup.peer = peer;
    if (backup.joining) {
      // A copy of the state after the last step; the steps after it follow
      // as they are recorded.
      LS_ASSIGN_OR_RETURN(Message install, copy());
      backup.install_seq = last();
      flatbuffers::FlatBufferBuilder fbb(96);
      auto body = wire::CreateReplicate(fbb, shard_, backup.install_seq,
                                        wire::ReplicaStep::Install);
      install.peer = peer;
      install.header =
          FinishEnvelope(fbb, wire::Body::Replicate, body.Union(),
                         wire::Role::Server, static_cast<int>(shard_));
      uint64_t bytes = 0;
      for (const zmq::message_t& frame : install.payloads)
        bytes += frame.size();
      LS_LOG(Info) << "backup of shard " << shard_ << " at " << endpoint
                   << " joins: sending a live copy at step "
                   << backup.install_seq << " (" << bytes / 1e6 << " MB)";
      return port_->Send(std::move(install));
    }
    // Everything not held by all goes again; the backup skips what it has.
    LS_LOG(Info) << "backup of shard " << shard_ << " at " << endpoint
                 << " subscribed; sending " << kept_.size() << " kept steps";
    for (Step& step : kept_) Send(peer, step);
    return Status::Ok();
  }
  auto it = std::find_if(expected_.begin(), expected_.end(),
                         [&](const auto& b) { return b.second.peer == peer; });
  if (it == expected_.end()) {
    return FailedPrecondition("an acknowledgement from no subscribed backup");
  }
  if (ack.seq() >= next_seq_) {
    return InvalidArgument("backup at " + it->first + " acknowledged step " +
                           std::to_string(ack.seq()) + " of " +
                           std::to_string(next_seq_ - 1));
  }
  Backup& backup = it->second;
  backup.held = std::max(backup.held, ack.seq());
  if (backup.joining && backup.held >= backup.install_seq) {
    backup.joining = false;  // waited for from now on
    LS_LOG(Info) << "backup of shard " << shard_ << " at " << it->first
                 << " holds the state at step " << backup.held;
  }
  Release();
  return Status::Ok();
}

uint64_t ReplicaStream::HeldByAll() const {
  uint64_t held = next_seq_ - 1;
  for (const auto& [endpoint, backup] : expected_) {
    if (!backup.joining) held = std::min(held, backup.held);
  }
  return held;
}

void ReplicaStream::Release() {
  const uint64_t held = HeldByAll();
  while (!kept_.empty() && kept_.front().seq <= held) kept_.pop_front();
  while (!replies_.empty() && replies_.front().first <= held) {
    Status sent = port_->Send(std::move(replies_.front().second));
    if (!sent.ok()) LS_LOG(Warning) << "reply lost: " << sent.message();
    replies_.pop_front();
  }
}

}  // namespace lockstep
