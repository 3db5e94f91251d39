#include "server/replication/replica_feed.h"

#include <chrono>
#include <optional>

#include "common/logging.h"
#include "common/security/peer_ticket.h"
#include "common/transport/transport_keys.h"

namespace lockstep {
namespace {

Message AckMessage(uint32_t shard, uint64_t seq, const std::string& own) {
  flatbuffers::FlatBufferBuilder fbb(96);
  auto body = wire::CreateReplicaAck(fbb, shard, seq,
                                     seq == 0 ? fbb.CreateString(own) : 0);
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::ReplicaAck, body.Union(),
                              wire::Role::Server, static_cast<int>(shard));
  return msg;
}

}  // namespace

ReplicaFeed::ReplicaFeed(uint32_t shard, std::string primary, std::string own,
                         double timeout_s)
    : shard_(shard), primary_(std::move(primary)), own_(std::move(own)) {
  connecting_ = std::async(
      std::launch::async,
      [this, timeout_s]() -> StatusOr<std::unique_ptr<DataChannel>> {
        // With job keys, a server proves a server's ticket, which only a
        // server key can make: no worker subscribes as a backup.
        std::optional<PeerTicket> ticket;
        if (const RoleKeys* keys = InstalledTransportKeys()) {
          LS_ASSIGN_OR_RETURN(TicketMint mint, TicketMint::Create(*keys));
          ticket = mint.Mint(TicketRole::kServer, static_cast<int32_t>(shard_));
        }
        return DataChannel::Connect(primary_, timeout_s, /*listening=*/false,
                                    ticket ? &*ticket : nullptr);
      });
}

ReplicaFeed::~ReplicaFeed() {
  if (connecting_.valid()) connecting_.wait();
}

StatusOr<bool> ReplicaFeed::Ready() {
  if (channel_ != nullptr) return true;
  if (!failed_.ok()) return failed_;
  if (connecting_.wait_for(std::chrono::seconds(0)) !=
      std::future_status::ready) {
    return false;
  }
  auto connected = connecting_.get();
  if (!connected.ok()) {
    failed_ = connected.status().WithContext(
        "backup of shard " + std::to_string(shard_) +
        " cannot reach its primary at " + primary_);
    return failed_;
  }
  channel_ = std::move(*connected);
  // The ack's endpoint field carries this server's endpoint, so the
  // primary knows which backup subscribed.
  LS_RETURN_IF_ERROR(channel_->Send(AckMessage(shard_, 0, own_)));
  LS_LOG(Info) << "backup of shard " << shard_ << " subscribed to " << primary_;
  return true;
}

StatusOr<bool> ReplicaFeed::Next(Message* step, Message* original) {
  while (true) {
    LS_ASSIGN_OR_RETURN(const bool got, channel_->Receive(step));
    if (!got) return false;
    LS_ASSIGN_OR_RETURN(const bool fresh,
                        ReadStep(shard_, &applied_, step, original));
    if (fresh) return true;  // else sent again: held
  }
}

StatusOr<bool> ReplicaFeed::ReadStep(uint32_t shard, uint64_t* applied,
                                     Message* step, Message* original) {
  LS_RETURN_IF_ERROR(VerifyHeader(step));
  if (step->envelope->body_type() != wire::Body::Replicate) {
    if (step->envelope->body_type() == wire::Body::Error) {
      return FailedPrecondition(
          "the primary of shard " + std::to_string(shard) +
          " refused this backup: " +
          flatbuffers::GetString(step->envelope->body_as_Error()->message()));
    }
    return InvalidArgument("the primary sent a " +
                           std::string(BodyName(step->envelope->body_type())) +
                           " on the replica feed");
  }
  const auto* replicate = step->envelope->body_as_Replicate();
  if (replicate->shard() != shard || step->payloads.empty()) {
    return InvalidArgument("malformed replica step");
  }
  if (replicate->step() == wire::ReplicaStep::Install) {
    // A live copy, first thing on a joining backup's feed: the state at
    // its seq. Its frames stay in `step` (they are no message).
    if (*applied != 0) {
      return FailedPrecondition("a live copy after step " +
                                std::to_string(*applied));
    }
    *applied = replicate->seq();
    original->envelope = nullptr;
    return true;
  }
  if (replicate->seq() <= *applied) return false;
  if (replicate->seq() != *applied + 1) {
    return FailedPrecondition(
        "replica step " + std::to_string(replicate->seq()) + " of shard " +
        std::to_string(shard) + " after step " + std::to_string(*applied));
  }
  original->peer.clear();
  original->header = std::move(step->payloads.front());
  original->payloads.clear();
  for (size_t i = 1; i < step->payloads.size(); ++i) {
    original->payloads.push_back(std::move(step->payloads[i]));
  }
  LS_RETURN_IF_ERROR(VerifyHeader(original));
  *applied = replicate->seq();
  return true;
}

Status ReplicaFeed::AckHeld() {
  if (acked_ == applied_) return Status::Ok();
  acked_ = applied_;
  return channel_->Send(AckMessage(shard_, applied_, own_));
}

}  // namespace lockstep
