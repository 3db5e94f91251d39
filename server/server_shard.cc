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
namespace {

std::atomic<bool> g_stop_requested{false};

std::string HostName() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace

void ServerShard::RequestStop() { g_stop_requested = true; }

ServerShard::ServerShard(ServerOptions options)
    : options_(std::move(options)) {}

ServerShard::~ServerShard() { JoinRoundWriter(); }

StatusOr<std::unique_ptr<ServerShard>> ServerShard::Create(
    ServerOptions options) {
  if (options.coordinator.empty()) {
    return InvalidArgument("--coordinator is required");
  }
  std::unique_ptr<ServerShard> s(new ServerShard(std::move(options)));
  LS_ASSIGN_OR_RETURN(s->data_, DataPort::Bind(s->options_.listen));
  s->endpoint_ = AdvertisedEndpoint(s->data_->bound(), s->options_.advertise);
  LS_ASSIGN_OR_RETURN(s->coordinator_,
                      ConnectDealer(s->options_.coordinator, ""));
  return s;
}

Status ServerShard::Run() {
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = wire::CreateRegister(
      fbb, wire::Role::Server, fbb.CreateString(HostName()),
      static_cast<uint32_t>(getpid()), fbb.CreateString(endpoint_),
      options_.rank_hint);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Register, body.Union(),
                                   wire::Role::Server, options_.rank_hint));
  LS_RETURN_IF_ERROR(AwaitWelcome());
  return Serve();
}

Status ServerShard::AwaitWelcome() {
  const int64_t deadline =
      NowMillis() + static_cast<int64_t>(options_.welcome_timeout_s * 1000);
  // Heartbeats while waiting (the job's interval comes with the welcome):
  // the coordinator answers every registered peer, so a coordinator that
  // stays silent is gone, e.g. it ended the job before this server's
  // registration reached it, and no shutdown will come. Until it first
  // answered it may still be starting: that silence may last longer.
  constexpr int64_t kBeatMs = 1000;
  int64_t next_beat = NowMillis() + kBeatMs;
  int64_t last_heard = NowMillis();
  bool heard = false;
  Message msg;
  while (NowMillis() < deadline) {
    if (g_stop_requested) return Unavailable("interrupted by a signal");
    if (NowMillis() - last_heard > (heard ? 10 : 30) * kBeatMs) {
      return Unavailable("the coordinator at " + options_.coordinator +
                         " went silent before welcoming this server");
    }
    if (NowMillis() >= next_beat) {
      flatbuffers::FlatBufferBuilder fbb(64);
      auto body = wire::CreateHeartbeat(fbb, -1);
      SendToCoordinator(FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(),
                                       wire::Role::Server, options_.rank_hint));
      next_beat = NowMillis() + kBeatMs;
    }
    zmq::pollitem_t item{static_cast<void*>(coordinator_), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, std::chrono::milliseconds(100));
    auto got = ReceiveMessage(coordinator_, false, &msg);
    if (!got.ok() || !*got) continue;
    last_heard = NowMillis();
    heard = true;
    Status ok = VerifyHeader(&msg);
    if (!ok.ok()) {
      ++bad_messages_;
      LS_LOG(Warning) << "dropped a bad message from the coordinator: "
                      << ok.message();
      continue;
    }
    const auto type = msg.envelope->body_type();
    if (type == wire::Body::Welcome) {
      return Setup(*msg.envelope->body_as_Welcome());
    }
    if (type == wire::Body::Shutdown || type == wire::Body::Error) {
      return FailedPrecondition(
          "coordinator refused this server: " +
          flatbuffers::GetString(
              type == wire::Body::Shutdown
                  ? msg.envelope->body_as_Shutdown()->reason()
                  : msg.envelope->body_as_Error()->message()));
    }
  }
  return DeadlineExceeded("no welcome from the coordinator at " +
                          options_.coordinator);
}

Status ServerShard::Setup(const wire::Welcome& welcome) {
  DropSnapshotState();
  sparse_.reset();
  epoch_ = welcome.epoch();
  LS_ASSIGN_OR_RETURN(job_, JobConfigFromWire(welcome.job()));
  LS_ASSIGN_OR_RETURN(layout_, LayoutFromWire(welcome.layout()));
  shard_ = welcome.rank();
  if (shard_ >= layout_.num_shards()) {
    return InvalidArgument("welcome assigns shard " + std::to_string(shard_) +
                           " of " + std::to_string(layout_.num_shards()));
  }
  SetLogRank(static_cast<int>(shard_));
  keys_ = ShardKeys(layout_, shard_);
  if (!job_.resolved())
    return InvalidArgument("welcome with an unresolved job");
  on_arrival_ = welcome.apply_mode() == wire::ApplyMode::OnArrival;
  clock_ = ShardClock(
      {on_arrival_, welcome.max_staleness(), welcome.scale_lr_by_staleness()});
  LS_ASSIGN_OR_RETURN(
      schedule_, LrSchedule::Parse(job_.lr_schedule, job_.lr, job_.max_clocks));
  LS_ASSIGN_OR_RETURN(optimizer_, Optimizer::Create(OptimizerConfig::Of(job_)));
  arrival_ = ArrivalClock(job_.GlobalBatch());
  const int slots = optimizer_->SlotsFor(on_arrival_);
  const ShardInfo& own = layout_.shards()[shard_];
  LS_RETURN_IF_ERROR(AwaitScratch());
  // A survivor rolled back keeps its arrays when its range is the same:
  // the restore overwrites every value, and fresh memory is slow to get
  // (on a VM each page is mapped on first touch: 600 MB took 2 s).
  const bool keep = dense_ != nullptr && welcome.restore_round() > 0 &&
                    dense_->range() == own.dense &&
                    dense_->state_slots() == slots &&
                    dense_acc_.size() == own.dense.size();
  if (!keep) {
    dense_.reset();  // the old arrays go before the new ones come
    LS_ASSIGN_OR_RETURN(
        dense_,
        DenseStore::Create(own.dense, layout_.tensors(), job_.seed, slots,
                           /*initialize=*/welcome.restore_round() == 0));
    dense_acc_ = WeightedAccumulator(0);
    dense_grad_ = {};
    scratch_ = std::async(std::launch::async, [n = own.dense.size()] {
      return Scratch{WeightedAccumulator(n), std::vector<float>(n)};
    });
  }
  if (layout_.sparse_dim() > 0) {
    sparse_ = std::make_unique<SparseTable>(layout_.sparse_dim(), slots);
    if (on_arrival_) sparse_->set_arrival_first(optimizer_->state_slots());
  }
  LS_RETURN_IF_ERROR(
      RestoreFromWelcome(welcome.restore_round(), welcome.restore_shards()));
  arrival_.Restore(dense_->time());
  // A restored point is not taken again; a rollback's other timeline goes.
  eval_images_.Restart(job_.eval_every, Progress());
  LS_LOG(Info) << "shard " << shard_ << " serves dense keys ["
               << own.dense.begin << ", " << own.dense.end << ") on "
               << endpoint_ << " with " << job_.optimizer;
  return Status::Ok();
}

Status ServerShard::AwaitScratch() {
  if (!scratch_.valid()) return Status::Ok();
  try {
    Scratch scratch = scratch_.get();
    dense_acc_ = std::move(scratch.acc);
    dense_grad_ = std::move(scratch.grad);
  } catch (const std::exception& e) {  // bad_alloc from the other thread
    return Internal(std::string("cannot allocate the commit scratch: ") +
                    e.what());
  }
  return Status::Ok();
}

Status ServerShard::Serve() {
  int64_t next_heartbeat = 0;
  int64_t last_heard = NowMillis();
  // The coordinator's own rule for declaring a peer dead.
  const int64_t silent_limit_ms =
      10 * static_cast<int64_t>(std::max<uint32_t>(job_.heartbeat_ms, 100));
  Message msg;
  std::vector<zmq::pollitem_t> items;
  while (!g_stop_requested) {
    items.assign(1, {static_cast<void*>(coordinator_), 0, ZMQ_POLLIN, 0});
    data_->AddPollItems(&items);
    items.push_back({nullptr, round_fd_, ZMQ_POLLIN, 0});
    // Messages left waiting by Process's per-connection cap go first.
    PollSockets(items.data(), items.size(),
                std::chrono::milliseconds(
                    data_->Backlogged() ? 0 : job_.heartbeat_ms / 2));
    data_->Process(items.data() + 1);
    if (items.back().revents & ZMQ_POLLIN) {
      background_.Wait();  // FinishRound un-watches the stores
      FinishRound();
    }
    while (true) {
      auto got = ReceiveMessage(coordinator_, false, &msg);
      if (!got.ok() || !*got) break;
      last_heard = NowMillis();
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
      HandleWorkerMessage(msg);
    }
    if (NowMillis() - last_heard > silent_limit_ms) {
      return Unavailable("the coordinator at " + options_.coordinator +
                         " has been silent for " +
                         std::to_string(NowMillis() - last_heard) + " ms");
    }
    if (NowMillis() >= next_heartbeat) {
      background_.Wait();  // reads the applied clock
      flatbuffers::FlatBufferBuilder fbb(64);
      auto body = wire::CreateHeartbeat(fbb, clock_.applied());
      SendToCoordinator(FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(),
                                       wire::Role::Server,
                                       static_cast<int>(shard_)));
      next_heartbeat = NowMillis() + job_.heartbeat_ms;
    }
  }
  return Unavailable("interrupted by a signal");
}

Status ServerShard::HandleCoordinatorMessage(Message& msg, bool* stop) {
  background_.Wait();
  Status ok = VerifyHeader(&msg);
  if (!ok.ok()) {
    ++bad_messages_;
    LS_LOG(Warning) << "dropped a bad message from the coordinator: "
                    << ok.message();
    return Status::Ok();
  }
  switch (msg.envelope->body_type()) {
    case wire::Body::Commit: {
      Status applied = ApplyCommit(*msg.envelope->body_as_Commit());
      if (!applied.ok()) return applied.WithContext("commit failed");
      ServeDeferredPulls();
      return Status::Ok();
    }
    case wire::Body::SnapshotStart:
      StartRound(*msg.envelope->body_as_SnapshotStart());
      return Status::Ok();
    case wire::Body::Welcome: {
      const auto* welcome = msg.envelope->body_as_Welcome();
      LS_LOG(Warning) << "rolling back to snapshot round "
                      << welcome->restore_round() << " (recovery epoch "
                      << welcome->epoch() << ")";
      return Setup(*welcome).WithContext("rollback failed");
    }
    case wire::Body::Shutdown:
      LS_LOG(Info) << "shutdown: "
                   << flatbuffers::GetString(
                          msg.envelope->body_as_Shutdown()->reason());
      *stop = true;
      return Status::Ok();
    case wire::Body::Heartbeat:
      return Status::Ok();
    case wire::Body::Error:
      LS_LOG(Warning) << "coordinator error: "
                      << flatbuffers::GetString(
                             msg.envelope->body_as_Error()->message());
      return Status::Ok();
    default:
      ++bad_messages_;
      LS_LOG(Warning) << "ignored unexpected "
                      << BodyName(msg.envelope->body_type())
                      << " from the coordinator";
      return Status::Ok();
  }
}

void ServerShard::HandleWorkerMessage(Message& msg) {
  background_.Wait();
  background_push_ = BufferedPush();  // frees its frames on this thread
  Status ok = VerifyHeader(&msg);
  if (!ok.ok()) {
    RejectBadMessage(msg.peer, ok, 0);
    return;
  }
  const int rank = msg.envelope->sender_rank();
  const bool evaluator = msg.envelope->sender_role() == wire::Role::Evaluator;
  if (evaluator && msg.envelope->body_type() != wire::Body::Pull) {
    RejectBadMessage(msg.peer, InvalidArgument("the evaluator only pulls"), 0);
    return;
  }
  if (!evaluator && (rank < 0 || static_cast<uint32_t>(rank) >= job_.workers)) {
    RejectBadMessage(msg.peer,
                     InvalidArgument("sender rank " + std::to_string(rank) +
                                     " is not a worker of this job"),
                     0);
    return;
  }
  const auto type = msg.envelope->body_type();
  const uint32_t epoch =
      type == wire::Body::Pull   ? msg.envelope->body_as_Pull()->epoch()
      : type == wire::Body::Push ? msg.envelope->body_as_Push()->epoch()
                                 : epoch_;
  if (epoch != epoch_) {
    // Sent before the worker heard of a rollback: the state it was meant
    // for is gone, and so is the socket it came from.
    if (stale_dropped_++ == 0 || epoch > epoch_) {
      LS_LOG(Info) << "dropped a " << BodyName(type) << " of recovery epoch "
                   << epoch << " (this shard is at " << epoch_ << ")";
    }
    return;
  }
  switch (type) {
    case wire::Body::Pull:
      return HandlePull(msg);
    case wire::Body::Push:
      return HandlePush(msg);
    default:
      RejectBadMessage(msg.peer,
                       InvalidArgument(std::string("unexpected ") +
                                       BodyName(msg.envelope->body_type()) +
                                       " on the data port"),
                       0);
  }
}

void ServerShard::SendToWorker(const std::string& peer, zmq::message_t header,
                               std::vector<zmq::message_t> payloads) {
  Message out;
  out.peer = peer;
  out.header = std::move(header);
  out.payloads = std::move(payloads);
  Status sent = data_->Send(std::move(out));
  if (!sent.ok())
    LS_LOG(Warning) << "reply to a worker lost: " << sent.message();
}

void ServerShard::SendToCoordinator(zmq::message_t header) {
  Message out;
  out.header = std::move(header);
  Status sent = SendMessage(coordinator_, false, std::move(out));
  if (!sent.ok())
    LS_LOG(Warning) << "coordinator unreachable: " << sent.message();
}

void ServerShard::RejectBadMessage(const std::string& peer, const Status& why,
                                   uint64_t request_id) {
  ++bad_messages_;
  if (bad_log_budget_-- > 0) {
    LS_LOG(Warning) << "rejected a message (" << bad_messages_
                    << " so far): " << why.message();
  }
  SendToWorker(peer,
               MakeErrorHeader(ErrorCodeFor(why), why.message(), request_id,
                               wire::Role::Server, static_cast<int>(shard_)));
}

}  // namespace lockstep
