#include "server/server_shard.h"

#include <unistd.h>

#include <atomic>

#include "common/clock.h"
#include "common/job_fields.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/layout_codec.h"

namespace lockstep {

void ServerShard::RequestStop() { ServerLink::RequestStop(); }

ServerShard::ServerShard(ServerOptions options)
    : options_(std::move(options)) {}

ServerShard::~ServerShard() = default;

StatusOr<std::unique_ptr<ServerShard>> ServerShard::Create(
    ServerOptions options) {
  if (options.coordinator.empty()) {
    return InvalidArgument("--coordinator is required");
  }
  std::unique_ptr<ServerShard> s(new ServerShard(std::move(options)));
  LS_ASSIGN_OR_RETURN(s->data_, DataPort::Bind(s->options_.listen));
  s->endpoint_ = AdvertisedEndpoint(s->data_->bound(), s->options_.advertise);
  LS_ASSIGN_OR_RETURN(s->link_,
                      ServerLink::Connect(s->options_.coordinator, s->endpoint_,
                                          s->options_.reattach_s));
  return s;
}

Status ServerShard::Run() {
  link_->Register(options_.rank_hint);
  LS_ASSIGN_OR_RETURN(
      const Message welcome,
      link_->AwaitWelcome(options_.rank_hint, options_.welcome_timeout_s));
  LS_RETURN_IF_ERROR(Setup(*welcome.envelope->body_as_Welcome()));
  Status served = Serve();
  if (data_ && data_->refused_connections() + data_->handshake_timeouts() > 0) {
    LS_LOG(Warning) << "data port: refused " << data_->refused_connections()
                    << " connections without the job's key, closed "
                    << data_->handshake_timeouts()
                    << " that did not authenticate in time";
  }
  return served;
}

Status ServerShard::Setup(const wire::Welcome& welcome) {
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
  if (welcome.adopt_clock() >= 0) {
    if (hosted_ == nullptr || shard != shard_) {
      return FailedPrecondition(
          "asked to keep shard " + std::to_string(shard) +
          (hosted_ == nullptr
               ? ", but this server holds none"
               : ", but this server holds shard " + std::to_string(shard_)));
    }
    heartbeat_ms_ = timeline.job.heartbeat_ms;
    return hosted_->Adopt(welcome, std::move(timeline));
  }
  if (hosted_ == nullptr || shard != shard_) {
    hosted_.reset();  // its round in flight and background apply end first
    hosted_ = std::make_unique<HostedShard>(
        shard, data_.get(),
        [this](zmq::message_t h) { SendToCoordinator(std::move(h)); });
  }
  shard_ = shard;
  SetLogRank(static_cast<int>(shard_));
  heartbeat_ms_ = timeline.job.heartbeat_ms;
  const ShardInfo own = timeline.layout.shards()[shard_];
  const std::string optimizer = timeline.job.optimizer;
  LS_RETURN_IF_ERROR(hosted_->Setup(welcome, std::move(timeline)));
  LS_LOG(Info) << "shard " << shard_ << " serves dense keys ["
               << own.dense.begin << ", " << own.dense.end << ") on "
               << endpoint_ << " with " << optimizer;
  return Status::Ok();
}

Status ServerShard::Serve() {
  link_->Serving(static_cast<int>(shard_), heartbeat_ms_);
  Message msg;
  std::vector<zmq::pollitem_t> items;
  while (!ServerLink::StopRequested()) {
    LS_RETURN_IF_ERROR(link_->CheckTerminated(static_cast<int>(shard_)));
    items.assign(1, link_->PollItem());
    data_->AddPollItems(&items);
    items.push_back({nullptr, hosted_->rounds_fd(), ZMQ_POLLIN, 0});
    // Messages left waiting by Process's per-connection cap go first.
    PollSockets(
        items.data(), items.size(),
        std::chrono::milliseconds(data_->Backlogged() ? 0 : heartbeat_ms_ / 2));
    // Transport first: it only moves bytes (a background apply may still
    // run); every message it yields is handled after that apply is done.
    data_->Process(items.data() + 1);
    if (items.back().revents & ZMQ_POLLIN) hosted_->FinishRound();
    while (true) {
      LS_ASSIGN_OR_RETURN(const bool got, link_->Receive(&msg));
      if (!got) break;
      bool stop = false;
      LS_RETURN_IF_ERROR(HandleCoordinatorMessage(msg, &stop));
      if (stop) return Status::Ok();
    }
    while (true) {
      auto got = data_->Receive(&msg);
      if (!got.ok()) {
        ++bad_messages_;
        continue;
      }
      if (!*got) break;
      hosted_->HandleData(msg);
    }
    // Heartbeats carry the applied clock; a lost coordinator is waited
    // for (offered the state at it under a commit policy) or ends this.
    LS_RETURN_IF_ERROR(link_->Tick([this] { return hosted_->applied(); },
                                   !hosted_->on_arrival()));
  }
  return Unavailable("interrupted by a signal");
}

Status ServerShard::HandleCoordinatorMessage(Message& msg, bool* stop) {
  hosted_->WaitForApply();
  switch (msg.envelope->body_type()) {
    case wire::Body::Commit:
      return hosted_->Commit(*msg.envelope->body_as_Commit())
          .WithContext("commit failed");
    case wire::Body::SnapshotStart:
      hosted_->StartRound(*msg.envelope->body_as_SnapshotStart());
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
      return Setup(*welcome).WithContext("rollback failed");
    }
    case wire::Body::Shutdown:
      LS_LOG(Info) << "shutdown: "
                   << link_->TakeShutdown(*msg.envelope->body_as_Shutdown());
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

void ServerShard::SendToCoordinator(zmq::message_t header) {
  link_->Send(std::move(header));
}

}  // namespace lockstep
