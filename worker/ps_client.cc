#include "worker/ps_client.h"

#include <algorithm>

#include "common/clock.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"
#include "worker/push_frame.h"

namespace lockstep {
namespace {

// Copies shard `s`'s pull reply `msg` into the caller's buffers: its dense
// range, then the rows of `ids` (`dim` floats each), through `scratch`
// where a frame is not aligned for floats.
Status CopyPullReply(const Message& msg, const ShardInfo& s, KeySpan ids,
                     uint32_t dim, std::span<float> dense_out,
                     std::span<float> sparse_out, std::vector<float>* scratch) {
  const size_t frames = ids.size() > 0 ? 2 : 1;
  if (msg.payloads.size() != frames) {
    return InvalidArgument("pull reply has the wrong frames");
  }
  LS_ASSIGN_OR_RETURN(
      auto dense, PayloadAs<float>(msg.payloads[0], s.dense.size(), scratch));
  std::copy(dense.begin(), dense.end(),
            dense_out.subspan(s.dense.begin).begin());
  if (ids.size() > 0) {
    LS_ASSIGN_OR_RETURN(auto rows, PayloadAs<float>(msg.payloads[1],
                                                    ids.size() * dim, scratch));
    std::copy(rows.begin(), rows.end(),
              sparse_out.subspan(ids.begin * dim).begin());
  }
  return Status::Ok();
}

}  // namespace

PsClient::PsClient(const KeyLayout& layout, uint32_t rank, double timeout_s,
                   uint32_t epoch, wire::Role role)
    : layout_(layout),
      rank_(rank),
      timeout_s_(timeout_s),
      epoch_(epoch),
      role_(role) {}

StatusOr<std::unique_ptr<PsClient>> PsClient::Create(
    const KeyLayout& layout, uint32_t rank, double timeout_s, uint32_t epoch,
    wire::Role role, bool replicated, std::optional<PeerTicket> ticket) {
  std::unique_ptr<PsClient> client(
      new PsClient(layout, rank, timeout_s, epoch, role));
  LS_ASSIGN_OR_RETURN(
      client->channels_,
      ShardChannels::Connect(layout, timeout_s, replicated, std::move(ticket)));
  client->clocks_read_.assign(layout.num_shards(), 0);
  return client;
}

StatusOr<std::vector<uint32_t>> PsClient::ApplyReroutes() {
  if (!reroutes_) return std::vector<uint32_t>();
  return channels_.Reroute(reroutes_(), timeout_s_, [this](uint32_t shard) {
    // The push in flight (a shard that acknowledged it may have been lost
    // before its backup held the commit it goes into), else the last one,
    // whose answer (to an earlier request) is not waited for.
    if (!repush_on_reroute_) return Status::Ok();
    if (push_in_flight_) return channels_.Send(shard, push_in_flight_(shard));
    return last_push_ ? channels_.Send(shard, last_push_(shard)) : Status::Ok();
  });
}

StatusOr<bool> PsClient::CheckReply(uint32_t shard, uint64_t request_id,
                                    const char* what, Message* msg) const {
  Status ok = VerifyHeader(msg);
  if (!ok.ok()) {
    return ok.WithContext("bad reply from server " + std::to_string(shard));
  }
  if (msg->envelope->body_type() != wire::Body::Error) return true;
  const auto* err = msg->envelope->body_as_Error();
  if (err->request_id() != 0 && err->request_id() != request_id) {
    return false;  // about an older request
  }
  return FailedPrecondition("server " + std::to_string(shard) +
                            " refused the " + what + ": " +
                            flatbuffers::GetString(err->message()));
}

namespace {

Status NoReply(uint32_t shard, const std::string& endpoint, const char* what,
               double timeout_s, bool lost) {
  const std::string server =
      "server " + std::to_string(shard) + " at " + endpoint;
  if (lost) {
    return Unavailable(server +
                       " is gone, and the coordinator neither rerouted its "
                       "shard nor rolled back within " +
                       std::to_string(timeout_s) + " s");
  }
  return DeadlineExceeded("no " + std::string(what) + " reply from " + server +
                          " within " + std::to_string(timeout_s) + " s");
}

}  // namespace

Status PsClient::ResendRerouted(
    const std::vector<uint32_t>& waiting,
    const std::function<Message(uint32_t, bool)>& make) {
  LS_ASSIGN_OR_RETURN(const std::vector<uint32_t> moved, ApplyReroutes());
  // A push in flight went to every moved shard already (ApplyReroutes).
  if (push_in_flight_) return Status::Ok();
  for (uint32_t s : moved) {
    if (std::find(waiting.begin(), waiting.end(), s) != waiting.end()) {
      LS_RETURN_IF_ERROR(channels_.Send(s, make(s, true)));
    }
  }
  return Status::Ok();
}

template <typename OnReply>
StatusOr<bool> PsClient::TakeReplies(uint32_t shard, uint64_t request_id,
                                     const char* what, OnReply& on_reply,
                                     Message* msg) {
  // Everything queued: a direct channel may hold several staged messages
  // that will not wake the next poll.
  while (true) {
    auto got = channels_.at(shard).Receive(msg);
    if (!got.ok()) {
      // The server died or was replaced: wait for the coordinator.
      LS_RETURN_IF_ERROR(channels_.MarkLost(shard, got.status()));
      return false;
    }
    if (!*got) return false;
    // Errors about an earlier request are dropped, about this one end it;
    // on_reply tells this request's replies from late ones.
    LS_ASSIGN_OR_RETURN(bool reply, CheckReply(shard, request_id, what, msg));
    if (!reply) continue;
    LS_ASSIGN_OR_RETURN(bool mine, on_reply(shard, *msg));
    if (mine) return true;
  }
}

template <typename OnReply>
Status PsClient::Exchange(const std::vector<uint32_t>& shards,
                          uint64_t request_id, const char* what,
                          const std::function<Message(uint32_t, bool)>& make,
                          OnReply on_reply) {
  // Reroutes heard since the last request first: nothing goes to a server
  // known to be gone.
  LS_RETURN_IF_ERROR(ApplyReroutes().status());
  for (uint32_t s : shards)
    LS_RETURN_IF_ERROR(channels_.Send(s, make(s, false)));
  // One deadline for the whole request: it is as late as its slowest shard.
  std::vector<uint32_t> waiting = shards;
  const int64_t deadline =
      NowMillis() + static_cast<int64_t>(timeout_s_ * 1000);
  Message msg;
  std::vector<zmq::pollitem_t> items;
  std::vector<uint32_t> polled;  // items[i] is shard polled[i]
  while (!waiting.empty()) {
    const int64_t left = deadline - NowMillis();
    if (left <= 0) {
      const uint32_t late = waiting.front();
      return NoReply(late, channels_.endpoint(late), what, timeout_s_,
                     channels_.lost(late));
    }
    items.clear();
    polled.clear();
    for (uint32_t s : waiting) {
      if (channels_.lost(s)) continue;  // closed: not polled
      items.push_back(channels_.at(s).PollItem());
      polled.push_back(s);
    }
    // The coordinator's socket wakes the poll too: a rollback, a reroute,
    // a shutdown or a signal ends or moves a request that waits on a dead
    // server (only the coordinator knows it is dead); a silent one is
    // noticed within 1 s.
    if (interrupt_) items.push_back(interrupt_item_);
    PollSockets(items.data(), items.size(),
                std::chrono::milliseconds(std::min<int64_t>(left, 1000)));
    if (interrupt_) {
      const uint64_t generation = channels_.generation();
      LS_RETURN_IF_ERROR(interrupt_());
      items.pop_back();
      LS_RETURN_IF_ERROR(ResendRerouted(waiting, make));
      // The channels changed (moved, or found gone): poll them again.
      if (channels_.generation() != generation) continue;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      if (!(items[i].revents & (ZMQ_POLLIN | ZMQ_POLLERR))) continue;
      LS_ASSIGN_OR_RETURN(const bool done, TakeReplies(polled[i], request_id,
                                                       what, on_reply, &msg));
      // This shard is done; a close right after its reply (shutdown) is
      // not this request's failure.
      if (done) std::erase(waiting, polled[i]);
    }
  }
  return Status::Ok();
}

Status PsClient::Pull(int64_t clock, std::span<float> dense_out,
                      std::span<const uint64_t> sparse_ids,
                      std::span<float> sparse_out, EvalRead* eval) {
  const int64_t eval_point = eval != nullptr ? eval->point : -1;
  if (eval != nullptr) eval->served_min = eval->served_max = -1;
  const uint64_t request_id = next_request_++;
  const uint32_t dim = layout_.sparse_dim();
  std::vector<KeySpan> id_pieces(layout_.num_shards(), KeySpan{0, 0});
  for (const ShardPiece& p : layout_.SplitSortedIds(sparse_ids)) {
    id_pieces[p.shard] = p.keys;
  }
  std::vector<uint32_t> shards;
  for (const ShardInfo& s : layout_.shards()) {
    if (s.dense.size() > 0 || id_pieces[s.shard].size() > 0) {
      shards.push_back(s.shard);
    }
  }
  const auto make = [&](uint32_t shard, bool /*resent*/) {
    const ShardInfo& s = layout_.shards()[shard];
    const KeySpan& ids = id_pieces[shard];
    flatbuffers::FlatBufferBuilder fbb(128);
    std::vector<wire::KeyRange> ranges;
    if (s.dense.size() > 0) ranges.emplace_back(s.dense.begin, s.dense.end);
    auto body = wire::CreatePull(
        fbb, request_id, clock, fbb.CreateVectorOfStructs(ranges), ids.size(),
        epoch_, eval_point, static_cast<int32_t>(shard));
    Message msg;
    msg.header = FinishEnvelope(fbb, wire::Body::Pull, body.Union(), role_,
                                static_cast<int>(rank_));
    if (ids.size() > 0) {
      msg.payloads.emplace_back(sparse_ids.data() + ids.begin,
                                ids.size() * sizeof(uint64_t));
    }
    return msg;
  };
  std::vector<float> scratch;
  return Exchange(shards, request_id, "pull", make,
                  [&](uint32_t shard, Message& msg) -> StatusOr<bool> {
                    if (msg.envelope->body_type() != wire::Body::PullReply)
                      return false;
                    const auto* reply = msg.envelope->body_as_PullReply();
                    if (reply->request_id() != request_id) return false;
                    clocks_read_[shard] = reply->logical_clock();
                    if (eval != nullptr) {
                      const int64_t at = reply->eval_point();
                      eval->served_min = eval->served_min < 0
                                             ? at
                                             : std::min(eval->served_min, at);
                      eval->served_max = std::max(eval->served_max, at);
                    }
                    LS_RETURN_IF_ERROR(CopyPullReply(
                        msg, layout_.shards()[shard], id_pieces[shard], dim,
                        dense_out, sparse_out, &scratch));
                    return true;
                  });
}

StatusOr<int64_t> PsClient::PullEvalPoint(int64_t point,
                                          std::span<float> dense_out,
                                          std::span<const uint64_t> sparse_ids,
                                          std::span<float> sparse_out) {
  EvalRead read;
  read.point = point;
  // A shard that had to answer a later point (its image of this one gone)
  // makes the others read that point too, so the model is one point.
  for (int tries = 0; tries < 3; ++tries) {
    LS_RETURN_IF_ERROR(
        Pull(read.point, dense_out, sparse_ids, sparse_out, &read));
    if (read.served_min == read.served_max) break;
    LS_LOG(Warning) << "evaluation point " << read.point
                    << " was gone on a shard; reading point " << read.served_max
                    << " instead";
    read.point = read.served_max;
  }
  if (read.served_min != read.served_max) {
    return Unavailable("the shards keep answering different evaluation points");
  }
  if (read.served_max != read.point) {
    LS_LOG(Warning) << "evaluation point " << read.point
                    << " was gone; evaluated point " << read.served_max
                    << " (the evaluator is behind training)";
  }
  return read.served_max;
}

namespace {

// Shard 0's answer to a push, which the other shards follow under a single
// verdict (on arrival): apply or drop, at its staleness.
struct PushDecision {
  wire::PushVerdict verdict = wire::PushVerdict::Measure;
  int64_t staleness = 0;
  bool refused = false;  // shard 0 refused it (PushGuard)
  std::string seal;      // shard 0's seal of its verdict (job keys)
};

// Counts shard `shard`'s ack of a push into *result (and *decided, for
// shard 0).
void TakeAck(const wire::PushAck& ack, uint32_t shard,
             PsClient::PushResult* result, PushDecision* decided) {
  const bool refused = ack.status() == wire::PushStatus::Refused;
  if (refused && result->refused++ == 0) {
    result->refusal = flatbuffers::GetString(ack.reason());
  }
  // Shard 0's refusal drops the push on the other shards too; those drops
  // are the refusal's, not staleness's.
  const bool dropped = refused || ack.status() == wire::PushStatus::Dropped;
  if (dropped && !refused && !decided->refused) ++result->dropped;
  result->max_staleness = std::max(result->max_staleness, ack.staleness());
  if (shard == 0) {
    decided->staleness = ack.staleness();
    decided->verdict =
        dropped ? wire::PushVerdict::Drop : wire::PushVerdict::Apply;
    decided->refused = refused;
    decided->seal = BytesOf(ack.verdict_seal());
  }
}

}  // namespace

void PsClient::Admission(int64_t clock, PushHeader* header) const {
  if (clock != admitted_.clock) return;
  header->quota = admitted_.quota;
  header->quota_seal = admitted_.seal;
}

StatusOr<PsClient::PushResult> PsClient::Push(
    int64_t clock, uint32_t batch, const std::shared_ptr<HostFloats>& dense,
    const std::shared_ptr<std::vector<uint64_t>>& ids,
    const std::shared_ptr<std::vector<float>>& sparse) {
  const PushData data = SplitPush(layout_, dense, ids, sparse);
  PushResult result;
  PushDecision decided;
  // Sends the push to `shards` and waits for their acks.
  const auto push_to = [&](const std::vector<uint32_t>& shards) -> Status {
    const uint64_t request_id = next_request_++;
    const auto make = [&](uint32_t shard, bool resent) {
      // Only under a single verdict do the shards follow shard 0's.
      const PushDecision follow = single_verdict_ ? decided : PushDecision();
      PushHeader header{request_id,          clock,  batch,
                        clocks_read_[shard], epoch_, follow.verdict,
                        follow.staleness,    resent};
      Admission(clock, &header);
      header.verdict_seal = follow.seal;
      return PushFrame(header, layout_.shards()[shard], data,
                       static_cast<int>(rank_));
    };
    if (repush_on_reroute_) {
      push_in_flight_ = [&make](uint32_t shard) { return make(shard, true); };
    }
    Status exchanged =
        Exchange(shards, request_id, "push", make,
                 [&](uint32_t shard, Message& msg) -> StatusOr<bool> {
                   if (msg.envelope->body_type() != wire::Body::PushAck)
                     return false;
                   const auto* ack = msg.envelope->body_as_PushAck();
                   if (ack->request_id() != request_id) return false;
                   TakeAck(*ack, shard, &result, &decided);
                   return true;
                 });
    push_in_flight_ = nullptr;
    return exchanged;
  };
  std::vector<uint32_t> shards;
  for (const ShardInfo& s : layout_.shards()) shards.push_back(s.shard);
  if (!single_verdict_ || shards.size() < 2) {
    LS_RETURN_IF_ERROR(push_to(shards));
  } else {
    LS_RETURN_IF_ERROR(push_to({0}));
    shards.erase(shards.begin());
    LS_RETURN_IF_ERROR(push_to(shards));
  }
  if (repush_on_reroute_) {
    // Kept (its buffers too) until the next push: the workers' pushes of
    // a clock are what a promoted backup builds that commit from.
    const uint64_t request_id = next_request_ - 1;
    PushHeader header{request_id, clock,  batch,
                      0,          epoch_, wire::PushVerdict::Measure,
                      0,          true};
    Admission(clock, &header);
    last_push_ = [this, header, data](uint32_t shard) {
      PushHeader h = header;
      h.clock_read = clocks_read_[shard];
      return PushFrame(h, layout_.shards()[shard], data,
                       static_cast<int>(rank_));
    };
  }
  return result;
}

}  // namespace lockstep
