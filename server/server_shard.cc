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
  ServerShard* shard = s.get();
  s->data_path_ = std::make_unique<ShardDataPath>(
      s->data_.get(), &s->model_, &s->clock_, &s->eval_images_, &s->updater_,
      [shard](zmq::message_t h) { shard->SendToCoordinator(std::move(h)); });
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

// Runs for the first welcome and again for each rollback's. The order
// matters: a round still being written watches the old stores, so it is
// dropped before the model is rebuilt; the model is built (empty when a
// round will overwrite it) before the restore fills it; and the updater
// starts its evaluation schedule from the progress the restore set.
Status ServerShard::Setup(const wire::Welcome& welcome) {
  if (welcome.adopt_clock() >= 0) return Adopt(welcome);
  rounds_.Drop(&model_);
  epoch_ = welcome.epoch();
  LS_ASSIGN_OR_RETURN(job_, JobConfigFromWire(welcome.job()));
  LS_ASSIGN_OR_RETURN(layout_, LayoutFromWire(welcome.layout()));
  shard_ = welcome.rank();
  if (shard_ >= layout_.num_shards()) {
    return InvalidArgument("welcome assigns shard " + std::to_string(shard_) +
                           " of " + std::to_string(layout_.num_shards()));
  }
  SetLogRank(static_cast<int>(shard_));
  if (!job_.resolved())
    return InvalidArgument("welcome with an unresolved job");
  const bool on_arrival = welcome.apply_mode() == wire::ApplyMode::OnArrival;
  clock_ = ShardClock(
      {on_arrival, welcome.max_staleness(), welcome.scale_lr_by_staleness()});
  LS_ASSIGN_OR_RETURN(
      LrSchedule schedule,
      LrSchedule::Parse(job_.lr_schedule, job_.lr, job_.max_clocks));
  updater_.Reset(job_, on_arrival, schedule);
  ConfigureDataPath(on_arrival);
  LS_RETURN_IF_ERROR(model_.Build(job_, layout_, shard_, on_arrival,
                                  /*restoring=*/welcome.restore_round() > 0));
  LS_RETURN_IF_ERROR(
      RestoreFromWelcome(welcome.restore_round(), welcome.restore_shards()));
  updater_.Start(job_.eval_every);
  const ShardInfo& own = layout_.shards()[shard_];
  LS_LOG(Info) << "shard " << shard_ << " serves dense keys ["
               << own.dense.begin << ", " << own.dense.end << ") on "
               << endpoint_ << " with " << job_.optimizer;
  return Status::Ok();
}

void ServerShard::ConfigureDataPath(bool on_arrival) {
  data_path_->Configure(
      {shard_,
       job_.MaxWorkers(),
       epoch_,
       layout_.sparse_dim(),
       on_arrival,
       ShardKeys(layout_, shard_),
       {job_.max_grad_norm, job_.grad_norm_action == "clip"}});
}

Status ServerShard::Adopt(const wire::Welcome& welcome) {
  if (welcome.adopt_clock() != clock_.applied() || welcome.rank() != shard_) {
    return FailedPrecondition(
        "asked to keep shard " + std::to_string(welcome.rank()) + " at clock " +
        std::to_string(welcome.adopt_clock()) +
        ", but this server holds shard " + std::to_string(shard_) +
        " at clock " + std::to_string(clock_.applied()));
  }
  LS_ASSIGN_OR_RETURN(KeyLayout layout, LayoutFromWire(welcome.layout()));
  if (!(layout.shards()[shard_].dense == layout_.shards()[shard_].dense)) {
    return FailedPrecondition("asked to keep a shard of another layout");
  }
  rounds_.Drop(&model_);
  layout_ = std::move(layout);
  epoch_ = welcome.epoch();
  LS_ASSIGN_OR_RETURN(job_, JobConfigFromWire(welcome.job()));
  clock_.DropPending();
  ConfigureDataPath(clock_.on_arrival());
  rounds_.Open(job_.snapshot_dir, shard_, job_.snapshot_full_every);
  LS_LOG(Warning) << "kept this shard's state at clock " << clock_.applied()
                  << ": the resumed coordinator adopted it";
  return Status::Ok();
}

Status ServerShard::RestoreFromWelcome(uint64_t round, uint32_t shards) {
  if (round > 0) {
    if (job_.snapshot_dir.empty()) {
      return InvalidArgument("welcome asks to restore without a snapshot_dir");
    }
    const double start = NowSeconds();
    auto restored =
        ShardRounds::Restore(job_.snapshot_dir, round, shards, layout_, shard_,
                             job_.optimizer, &model_);
    if (!restored.ok()) {
      Status failed = restored.status().WithContext("restoring round " +
                                                    std::to_string(round));
      // The coordinator marks the round failed, so the next resume takes
      // the complete round before it.
      SendToCoordinator(
          MakeErrorHeader(wire::ErrorCode::RestoreFailed, failed.message(),
                          round, wire::Role::Server, static_cast<int>(shard_)));
      return failed;
    }
    updater_.Restored(*restored);
    LS_LOG(Info) << "restored round " << round << " (clock " << restored->clock
                 << ", step " << restored->step << ") from " << shards
                 << " shard stores: " << restored->bytes_read / 1e6 << " MB in "
                 << NowSeconds() - start << " s";
  }
  rounds_.Open(job_.snapshot_dir, shard_, job_.snapshot_full_every);
  // A rollback's welcome (epoch > 0) is answered once this shard holds the
  // round: the coordinator resumes the workers only when every shard has
  // said so, and it drops data requests of other epochs meanwhile.
  if (epoch_ > 0) {
    flatbuffers::FlatBufferBuilder fbb(64);
    auto body = wire::CreateRestored(fbb, epoch_, round, clock_.applied());
    SendToCoordinator(FinishEnvelope(fbb, wire::Body::Restored, body.Union(),
                                     wire::Role::Server,
                                     static_cast<int>(shard_)));
  }
  return Status::Ok();
}

void ServerShard::StartRound(const wire::SnapshotStart& start) {
  ShardRoundMeta meta;
  meta.round = start.round();
  meta.clock = start.clock();
  meta.shard = shard_;
  meta.layout = layout_;
  meta.job = job_;
  meta.optimizer = job_.optimizer;
  meta.state_slots = model_.optimizer().state_slots();
  meta.step = model_.dense().step();
  meta.time = model_.dense().time();
  meta.sparse_rows = model_.sparse() ? model_.sparse()->rows() : 0;
  meta.contained = updater_.contained();
  meta.unix_time = UnixSeconds();
  if (auto failed =
          rounds_.Start(std::move(meta), start.keep_from(), &model_)) {
    SendSnapshotDone(*failed);
  }
}

void ServerShard::SendSnapshotDone(const ShardRounds::Report& report) {
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
  flatbuffers::FlatBufferBuilder fbb(256);
  std::vector<flatbuffers::Offset<wire::PushCutEntry>> cut;
  for (const auto& [worker, clock] : report.contained) {
    cut.push_back(wire::CreatePushCutEntry(fbb, worker, clock));
  }
  auto body = wire::CreateSnapshotDone(
      fbb, report.round, shard_, report.clock,
      report.status.ok() ? report.bytes : 0, report.status.ok(),
      fbb.CreateString(report.status.message()), report.freeze_ms,
      report.write_s, report.copied_on_apply, fbb.CreateVector(cut));
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::SnapshotDone, body.Union(),
                                   wire::Role::Server,
                                   static_cast<int>(shard_)));
}

// Committed goes out only after the update is applied, so a clock the
// coordinator counts as committed by every shard is one each of them holds.
// A commit this shard already applied (sent again) changes nothing and is
// not answered twice.
Status ServerShard::Commit(const wire::Commit& commit) {
  LS_ASSIGN_OR_RETURN(const std::optional<uint32_t> pushes,
                      updater_.ApplyCommit(commit));
  if (!pushes) return Status::Ok();  // a repeated commit
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateCommitted(fbb, commit.clock(), shard_, *pushes);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Committed, body.Union(),
                                   wire::Role::Server,
                                   static_cast<int>(shard_)));
  return Status::Ok();
}

Status ServerShard::Serve() {
  link_->Serving(static_cast<int>(shard_), job_.heartbeat_ms);
  Message msg;
  std::vector<zmq::pollitem_t> items;
  while (!ServerLink::StopRequested()) {
    LS_RETURN_IF_ERROR(link_->CheckTerminated(static_cast<int>(shard_)));
    items.assign(1, link_->PollItem());
    data_->AddPollItems(&items);
    items.push_back({nullptr, rounds_.fd(), ZMQ_POLLIN, 0});
    // Messages left waiting by Process's per-connection cap go first.
    PollSockets(items.data(), items.size(),
                std::chrono::milliseconds(
                    data_->Backlogged() ? 0 : job_.heartbeat_ms / 2));
    // Transport first: it only moves bytes (a background apply may still
    // run); every message it yields is handled after that apply is done.
    data_->Process(items.data() + 1);
    if (items.back().revents & ZMQ_POLLIN) {
      data_path_->WaitForApply();  // Finish un-watches the stores
      if (auto report = rounds_.Finish(&model_)) SendSnapshotDone(*report);
    }
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
      data_path_->Handle(msg);
    }
    // Heartbeats carry the applied clock; a lost coordinator is waited
    // for (offered the state at it under a commit policy) or ends this.
    LS_RETURN_IF_ERROR(link_->Tick(
        [this] {
          data_path_->WaitForApply();  // reads the applied clock
          return clock_.applied();
        },
        !clock_.on_arrival()));
  }
  return Unavailable("interrupted by a signal");
}

Status ServerShard::HandleCoordinatorMessage(Message& msg, bool* stop) {
  data_path_->WaitForApply();
  switch (msg.envelope->body_type()) {
    case wire::Body::Commit: {
      Status applied = Commit(*msg.envelope->body_as_Commit());
      if (!applied.ok()) return applied.WithContext("commit failed");
      data_path_->ServeDeferredPulls();
      return Status::Ok();
    }
    case wire::Body::SnapshotStart:
      StartRound(*msg.envelope->body_as_SnapshotStart());
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
