#include "server/server_process.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "common/clock.h"
#include "common/http/process_health.h"
#include "common/job_fields.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/layout_codec.h"

namespace lockstep {
namespace {

// Replies a worker's data connection may leave unread, in pulls of the
// largest shard (DataPort::LimitUnreadReplies), plus 1 MiB of acks.
constexpr uint64_t kUnreadPullReplies = 8;

}  // namespace

void ServerProcess::RequestStop() { ServerCoordinatorLink::RequestStop(); }

void ServerProcess::BoundPeerTraffic(const KeyLayout& layout) {
  // Sparse rows scale with a batch: a sparse model keeps the transport's
  // limits.
  if (layout.sparse_dim() != 0) return;
  // No peer sends a payload frame larger than a shard's dense values.
  uint64_t largest = uint64_t{1} << 20;
  for (const ShardInfo& s : layout.shards()) {
    largest = std::max<uint64_t>(largest, s.dense.size() * sizeof(float));
  }
  data_->LimitPayload(largest);
  // A worker has a pull or two per shard in flight (and the evaluator one
  // point): one that leaves many replies unread asks for them only to hold
  // the server's memory.
  data_->LimitUnreadReplies(kUnreadPullReplies * largest + (uint64_t{1} << 20));
}

ServerProcess::ServerProcess(ServerOptions options)
    : options_(std::move(options)) {}

ServerProcess::~ServerProcess() = default;

StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Create(
    ServerOptions options) {
  if (options.coordinator.empty()) {
    return InvalidArgument("--coordinator is required");
  }
  std::unique_ptr<ServerProcess> s(new ServerProcess(std::move(options)));
  LS_ASSIGN_OR_RETURN(s->data_, DataPort::Bind(s->options_.listen));
  s->endpoint_ = AdvertisedEndpoint(s->data_->bound(), s->options_.advertise);
  LS_ASSIGN_OR_RETURN(s->link_, ServerCoordinatorLink::Connect(
                                    s->options_.coordinator, s->endpoint_,
                                    s->options_.reattach_s));
  return s;
}

Status ServerProcess::Run() {
  link_->Register(options_.rank_hint);
  LS_ASSIGN_OR_RETURN(
      const Message welcome,
      link_->AwaitWelcome(options_.rank_hint, options_.welcome_timeout_s));
  LS_RETURN_IF_ERROR(Setup(welcome));
  Status served = Serve();
  if (data_ && data_->refused_connections() + data_->handshake_timeouts() > 0) {
    LS_LOG(Warning) << "data port: refused " << data_->refused_connections()
                    << " connections without the job's key, closed "
                    << data_->handshake_timeouts()
                    << " that did not authenticate in time";
  }
  return served;
}

Status ServerProcess::Setup(const Message& msg) {
  const wire::Welcome& welcome = *msg.envelope->body_as_Welcome();
  HostedShard::Timeline timeline;
  LS_ASSIGN_OR_RETURN(timeline.job, JobConfigFromWire(welcome.job()));
  LS_ASSIGN_OR_RETURN(timeline.layout, LayoutFromWire(welcome.layout()));
  timeline.epoch = welcome.epoch();
  if (!timeline.job.resolved()) {
    return InvalidArgument("welcome with an unresolved job");
  }
  const uint32_t shard = welcome.rank();
  if (shard >= timeline.layout.num_shards()) {
    return InvalidArgument("welcome assigns shard " + std::to_string(shard) +
                           " of " +
                           std::to_string(timeline.layout.num_shards()));
  }
  heartbeat_ms_ = timeline.job.heartbeat_ms;
  if (welcome.adopt_clock() >= 0) {
    // Every range here keeps its state under the adopted timeline: the
    // backups' state is their primaries', which are adopted alike.
    if (ServedRange(static_cast<int>(shard)) == nullptr || shard != shard_) {
      return FailedPrecondition("asked to keep shard " + std::to_string(shard) +
                                ", which this server does not serve");
    }
    for (auto& [k, range] : hosted_) {
      LS_RETURN_IF_ERROR(range->Adopt(welcome, timeline));
    }
    return Status::Ok();
  }
  shard_ = shard;
  SetLogRank(static_cast<int>(shard_));
  LS_RETURN_IF_ERROR(PlaceRanges(welcome, timeline));
  BoundPeerTraffic(timeline.layout);
  size_t backups = 0;
  for (const auto& [k, range] : hosted_) {
    if (!range->primary()) {
      ++backups;
      continue;
    }
    const ShardInfo& own = timeline.layout.shards()[k];
    LS_LOG(Info) << "shard " << k << " serves dense keys [" << own.dense.begin
                 << ", " << own.dense.end << ") on " << endpoint_ << " with "
                 << timeline.job.optimizer;
  }
  if (backups > 0) {
    LS_LOG(Info) << "this server holds " << backups << " backups";
  }
  return Status::Ok();
}

Status ServerProcess::PlaceRanges(const wire::Welcome& welcome,
                                  const HostedShard::Timeline& timeline) {
  std::map<uint32_t, bool> ranges;  // shard -> primary
  if (welcome.primaries() == nullptr) {
    ranges[shard_] = true;
  } else {
    for (uint32_t k : *welcome.primaries()) {
      if (k >= timeline.layout.num_shards()) {
        return InvalidArgument("welcome assigns shard " + std::to_string(k));
      }
      ranges[k] = true;
    }
  }
  if (welcome.backups() != nullptr) {
    for (uint32_t k : *welcome.backups()) {
      if (k >= timeline.layout.num_shards() || ranges.count(k) > 0) {
        return InvalidArgument("welcome assigns a backup of shard " +
                               std::to_string(k));
      }
      ranges[k] = false;
    }
  }
  // Ranges no longer held go first (their rounds and applies end).
  std::erase_if(hosted_, [&](const auto& h) { return !ranges.count(h.first); });
  std::vector<std::string> backups_at;
  if (welcome.backups_at() != nullptr) {
    for (const auto* place : *welcome.backups_at()) {
      backups_at.push_back(flatbuffers::GetString(place->endpoint()));
    }
  }
  for (const auto& [k, primary] : ranges) {
    auto& range = hosted_[k];
    if (range == nullptr) {
      range = std::make_unique<HostedShard>(
          k, data_.get(),
          [this](zmq::message_t h) { SendToCoordinator(std::move(h)); });
    }
    LS_RETURN_IF_ERROR(range->Setup(welcome, timeline, primary));
    if (primary) {
      range->ServeReplicas(backups_at, /*joining=*/false);
    } else {
      range->follower().Follow(timeline.layout.shards()[k].endpoint, endpoint_,
                               options_.welcome_timeout_s);
    }
  }
  return Status::Ok();
}

HostedShard* ServerProcess::ServedRange(int shard) {
  auto it = hosted_.find(shard < 0 ? shard_ : static_cast<uint32_t>(shard));
  if (it == hosted_.end() || !it->second->primary()) return nullptr;
  return it->second.get();
}

uint64_t ServerProcess::HostedBadMessages() const {
  uint64_t bad = 0;
  for (const auto& [k, range] : hosted_)
    bad += range->data_path().bad_messages();
  return bad;
}

Status ServerProcess::Serve() {
  link_->Serving(static_cast<int>(shard_), heartbeat_ms_);
  Message msg;
  std::vector<zmq::pollitem_t> items;
  // The ranges whose rounds fd is polled, with its index in items.
  std::vector<std::pair<HostedShard*, size_t>> writing;
  while (!ServerCoordinatorLink::StopRequested()) {
    ProcessHealth::Beat();
    LS_RETURN_IF_ERROR(link_->CheckTerminated(static_cast<int>(shard_)));
    items.assign(1, link_->PollItem());
    data_->AddPollItems(&items);
    writing.clear();
    for (auto& [k, range] : hosted_) {
      if (range->rounds_fd() >= 0) {
        writing.emplace_back(range.get(), items.size());
        items.push_back({nullptr, range->rounds_fd(), ZMQ_POLLIN, 0});
      }
      ReplicaFeed* feed = range->follower().feed();
      if (feed == nullptr) continue;
      auto ready = feed->Ready();  // a failure is TakeSteps's to report
      if (ready.ok() && *ready) items.push_back(feed->PollItem());
    }
    // Messages left waiting by Process's per-connection cap go first; a
    // backup still connecting to its primary is looked at again soon.
    PollSockets(
        items.data(), items.size(),
        std::chrono::milliseconds(data_->Backlogged() ? 0 : heartbeat_ms_ / 2));
    // Transport first: it only moves bytes (a background apply may still
    // run); every message it yields is handled after that apply is done.
    data_->Process(items.data() + 1);
    for (const auto& [range, item] : writing) {
      if (items[item].revents & ZMQ_POLLIN) range->FinishRound();
    }
    for (auto& [k, range] : hosted_)
      LS_RETURN_IF_ERROR(range->follower().TakeSteps());
    while (true) {
      LS_ASSIGN_OR_RETURN(const bool got, link_->Receive(&msg));
      if (!got) break;
      bool stop = false;
      LS_RETURN_IF_ERROR(HandleCoordinatorMessage(msg, &stop));
      if (stop) return Status::Ok();
    }
    RouteData();
    for (auto& [k, range] : hosted_) {
      LS_RETURN_IF_ERROR(range->RetryDeferredCommit());
    }
    // Heartbeats carry the applied clock; a lost coordinator is waited
    // for (offered the state at it under a commit policy) or ends this.
    // A server that only holds backups offers no state of its own.
    HostedShard* own = ServedRange(-1);
    LS_RETURN_IF_ERROR(link_->Tick(
        [own] { return own != nullptr ? own->applied() : int64_t{-1}; },
        own != nullptr && !own->on_arrival()));
  }
  return Unavailable("interrupted by a signal");
}

void ServerProcess::RouteData() {
  Message msg;
  while (true) {
    auto got = data_->Receive(&msg);
    if (!got.ok()) {
      ++bad_messages_;
      continue;
    }
    if (!*got) return;
    int shard = -1;
    if (VerifyHeader(&msg).ok()) {
      const auto type = msg.envelope->body_type();
      if (type == wire::Body::ReplicaAck) {
        const auto* ack = msg.envelope->body_as_ReplicaAck();
        HostedShard* range = ServedRange(static_cast<int>(ack->shard()));
        Status taken =
            msg.role != "" && msg.role != "server"
                ? FailedPrecondition(
                      "a replica subscription needs a server's ticket (the "
                      "server key)")
            : range == nullptr
                ? FailedPrecondition("shard " + std::to_string(ack->shard()) +
                                     " is not served here")
                : range->HandleReplicaAck(msg.peer, *ack);
        if (!taken.ok()) {
          LS_LOG(Warning) << "refused a backup: " << taken.message();
          Refuse(msg.peer, taken);
        }
        continue;
      }
      if (type == wire::Body::Pull)
        shard = msg.envelope->body_as_Pull()->shard();
      if (type == wire::Body::Push)
        shard = msg.envelope->body_as_Push()->shard();
    }
    // A range not served here: its own range's data path refuses the
    // request (its keys are not this shard's). A server that serves none
    // (it holds backups) answers it here: a backup never takes a request.
    HostedShard* range = ServedRange(shard);
    if (range == nullptr) range = ServedRange(-1);
    if (range != nullptr) {
      range->data_path().Handle(msg);
    } else {
      Refuse(msg.peer, FailedPrecondition("this server serves no shard"));
    }
  }
}

void ServerProcess::Refuse(const std::string& peer, const Status& why) {
  ++bad_messages_;
  Message refusal;
  refusal.peer = peer;
  refusal.header =
      MakeErrorHeader(ErrorCodeFor(why), why.message(), 0, wire::Role::Server,
                      static_cast<int>(shard_));
  (void)data_->Send(std::move(refusal));
}

Status ServerProcess::HandlePromote(const wire::Promote& promote) {
  auto it = hosted_.find(promote.shard());
  if (it == hosted_.end()) {
    return FailedPrecondition("asked to serve shard " +
                              std::to_string(promote.shard()) +
                              ", of which this server holds no backup");
  }
  std::vector<std::string> backups;
  if (promote.backups_at() != nullptr) {
    for (const auto* place : *promote.backups_at()) {
      backups.push_back(flatbuffers::GetString(place->endpoint()));
    }
  }
  return it->second->Promote(backups);
}

Status ServerProcess::HandleFollow(const wire::Follow& follow) {
  auto it = hosted_.find(follow.shard());
  if (it == hosted_.end() || it->second->primary()) {
    return FailedPrecondition("asked to follow shard " +
                              std::to_string(follow.shard()) +
                              "'s new primary, of which this server holds "
                              "no backup");
  }
  it->second->follower().Follow(flatbuffers::GetString(follow.primary()),
                                endpoint_, options_.welcome_timeout_s);
  return Status::Ok();
}

Status ServerProcess::HandleCoordinatorMessage(Message& msg, bool* stop) {
  for (auto& [k, range] : hosted_) range->data_path().WaitForApply();
  switch (msg.envelope->body_type()) {
    case wire::Body::Commit:
      for (auto& [k, range] : hosted_) {
        if (!range->primary()) continue;
        LS_RETURN_IF_ERROR(range->Commit(msg).WithContext("commit failed"));
      }
      return Status::Ok();
    case wire::Body::SnapshotStart:
      for (auto& [k, range] : hosted_) {
        if (range->primary()) {
          range->StartRound(*msg.envelope->body_as_SnapshotStart());
        }
      }
      return Status::Ok();
    case wire::Body::Promote:
      return HandlePromote(*msg.envelope->body_as_Promote());
    case wire::Body::Follow:
      return HandleFollow(*msg.envelope->body_as_Follow());
    case wire::Body::Fence:
      // Every range: a backup promoted later refuses the same.
      for (auto& [k, range] : hosted_) {
        range->data_path().Fence(msg.envelope->body_as_Fence()->worker(),
                                 msg.envelope->body_as_Fence()->incarnation());
      }
      return Status::Ok();
    case wire::Body::Welcome: {
      // A rollback's, or a restarted coordinator's after re-attaching.
      const auto* welcome = msg.envelope->body_as_Welcome();
      link_->Welcomed();
      if (welcome->adopt_clock() < 0) {
        LS_LOG(Warning) << "rolling back to snapshot round "
                        << welcome->restore_round() << " (recovery epoch "
                        << welcome->epoch() << ")";
      }
      return Setup(msg).WithContext("rollback failed");
    }
    case wire::Body::Shutdown:
      LS_LOG(Info) << "shutdown: "
                   << link_->TakeShutdown(*msg.envelope->body_as_Shutdown());
      for (auto& [k, range] : hosted_) {
        if (range->primary()) LS_LOG(Info) << range->Totals();
      }
      *stop = true;
      return Status::Ok();
    default:
      ++bad_messages_;
      LS_LOG(Warning) << "ignored unexpected "
                      << BodyName(msg.envelope->body_type())
                      << " from the coordinator";
      return Status::Ok();
  }
}

void ServerProcess::SendToCoordinator(zmq::message_t header) {
  link_->Send(std::move(header));
}

}  // namespace lockstep
