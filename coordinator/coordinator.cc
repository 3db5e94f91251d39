#include "coordinator/coordinator.h"

#include <algorithm>
#include <atomic>

#include "common/clock.h"
#include "common/durable_file.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"
#include "server/optimizers/optimizer.h"
#include "sync_policies/policy_registry.h"

namespace lockstep {
namespace {

std::atomic<bool> g_stop_requested{false};

}  // namespace

void Coordinator::RequestStop() { g_stop_requested = true; }

Coordinator::Coordinator(CoordinatorOptions options)
    : options_(std::move(options)), ledger_(options_.job.servers) {}

Coordinator::~Coordinator() = default;

StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(
    CoordinatorOptions options) {
  // What the coordinator owns is checked now; the model and the data set
  // are the workers' to check when they load them.
  LS_RETURN_IF_ERROR(ValidateJobConfig(options.job));
  LS_RETURN_IF_ERROR(ResolveAutoDataOrder(&options.job));
  LS_RETURN_IF_ERROR(Optimizer::Validate(options.job));
  std::unique_ptr<Coordinator> c(new Coordinator(std::move(options)));
  LS_ASSIGN_OR_RETURN(c->policy_, CreateSyncPolicy(c->options_.job));
  LS_RETURN_IF_ERROR(c->SetUpSnapshots());
  LS_ASSIGN_OR_RETURN(
      c->recorder_,
      RunRecorder::Create(c->options_.run_dir, c->options_.job,
                          c->policy_->name(), c->options_.resume));
  std::string bound;
  LS_ASSIGN_OR_RETURN(c->socket_, BindRouter(c->options_.listen, &bound));
  c->endpoint_ = AdvertisedEndpoint(bound, c->options_.advertise);
  if (!c->options_.run_dir.empty()) {
    // For tools that talk to the live job (lockstep-snapshot now).
    LS_RETURN_IF_ERROR(WriteFileDurably(c->options_.run_dir + "/endpoint",
                                        c->endpoint_ + "\n"));
  }
  if (!c->options_.metrics_listen.empty()) {
    LS_ASSIGN_OR_RETURN(c->metrics_,
                        MetricsHttpServer::Start(c->options_.metrics_listen));
  }
  return c;
}

Status Coordinator::Run() {
  const int64_t start_ms = NowMillis();
  const auto poll_ms = std::chrono::milliseconds(
      std::max<uint32_t>(10, options_.job.heartbeat_ms / 4));
  Message msg;
  while (!TrainingDone() || !RoundsSettled()) {
    if (g_stop_requested) {
      SendShutdown("coordinator interrupted");
      return Unavailable("interrupted by a signal");
    }
    zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, poll_ms);
    while (true) {
      auto got = ReceiveMessage(socket_, true, &msg);
      if (!got.ok()) {
        ++bad_messages_;
        continue;
      }
      if (!*got) break;
      HandleMessage(msg);
    }
    if (!abort_status_.ok()) {
      SendShutdown("job aborted: " + abort_status_.message());
      return abort_status_;
    }
    if (!training_ &&
        NowMillis() - start_ms > options_.register_timeout_s * 1000) {
      SendShutdown("registration timed out");
      return DeadlineExceeded(
          "only " + std::to_string(server_ids_.size()) + " of " +
          std::to_string(options_.job.servers) + " servers and " +
          std::to_string(worker_ids_.size()) + " of " +
          std::to_string(options_.job.workers) + " workers registered");
    }
    LS_RETURN_IF_ERROR(CheckLiveness());
    if (training_) recorder_->MaybePrintProgress(false);
    PublishMetrics(false);
  }
  PublishMetrics(true);
  SendShutdown("job finished");
  std::map<std::string, double> extra = {
      {"bad_messages", static_cast<double>(bad_messages_)},
      {"dead_workers", static_cast<double>(dead_workers_)},
      {"recoveries", static_cast<double>(recoveries_)},
      {"snapshot_rounds_complete", static_cast<double>(rounds_complete_)},
      {"snapshot_rounds_failed", static_cast<double>(rounds_failed_)},
      {"policy_decision_s", policy_seconds_},
      {"policy_overhead_share",
       policy_seconds_ / std::max(1e-9, recorder_->WallSeconds())}};
  return recorder_->Finish(extra, policy_->Metrics());
}

void Coordinator::PublishMetrics(bool force) {
  if (metrics_ == nullptr) return;
  const double now = NowSeconds();
  if (!force && now - metrics_published_s_ < 0.5) return;
  metrics_published_s_ = now;
  std::string text = recorder_->PrometheusText();
  auto line = [&](const std::string& name, double v) {
    AppendMetricLine(&text, name, v);
  };
  line("lockstep_live_workers", static_cast<double>(worker_ids_.size()));
  line("lockstep_dead_workers_total", static_cast<double>(dead_workers_));
  line("lockstep_recoveries_total", static_cast<double>(recoveries_));
  line("lockstep_bad_messages_total", static_cast<double>(bad_messages_));
  line("lockstep_policy_decision_seconds_total", policy_seconds_);
  line("lockstep_snapshot_rounds_total{result=\"complete\"}",
       static_cast<double>(rounds_complete_));
  line("lockstep_snapshot_rounds_total{result=\"failed\"}",
       static_cast<double>(rounds_failed_));
  for (const auto& [name, value] : policy_->Metrics()) line(name, value);
  metrics_->Publish(std::move(text));
}

bool Coordinator::TrainingDone() const {
  return training_ && final_eval_received_;
}

void Coordinator::HandleMessage(Message& msg) {
  Status verified = VerifyHeader(&msg);
  if (!verified.ok()) {
    RejectBadMessage(msg.peer, verified);
    return;
  }
  const wire::Envelope* env = msg.envelope;
  if (env->body_type() == wire::Body::Register) {
    HandleRegister(msg.peer, *env->body_as_Register());
    return;
  }
  if (env->body_type() == wire::Body::SnapshotStart &&
      env->sender_role() == wire::Role::Tool) {
    HandleRoundRequest(msg.peer);
    return;
  }
  auto it = peers_.find(msg.peer);
  if (it == peers_.end() && env->body_type() == wire::Body::Heartbeat) {
    // A worker's heartbeat thread has a socket of its own: match by rank.
    it = std::find_if(peers_.begin(), peers_.end(), [&](const auto& p) {
      return p.second.role == env->sender_role() &&
             p.second.rank == env->sender_rank() && p.second.rank >= 0;
    });
    if (it != peers_.end()) {
      it->second.last_seen_ms = NowMillis();
      ReplyHeartbeat(msg.peer);
      return;
    }
  }
  if (it == peers_.end()) {
    RejectBadMessage(
        msg.peer, FailedPrecondition(std::string(BodyName(env->body_type())) +
                                     " from a peer that has not registered"));
    return;
  }
  Peer& peer = it->second;
  peer.last_seen_ms = NowMillis();
  peer.restoring = false;
  HandlePeerMessage(msg.peer, peer, *env);
}

void Coordinator::HandlePeerMessage(const std::string& id, Peer& peer,
                                    const wire::Envelope& env) {
  const bool evaluator = peer.role == wire::Role::Evaluator;
  const bool worker = peer.role == wire::Role::Worker;
  switch (env.body_type()) {
    case wire::Body::Heartbeat:
      return ReplyHeartbeat(id);
    case wire::Body::Describe:
      if (!worker && !evaluator) break;
      return HandleDescribe(id, peer, *env.body_as_Describe());
    case wire::Body::Admit:
      if (!worker && !evaluator) break;
      if (!CurrentEpoch(peer, env.body_as_Admit()->epoch())) return;
      return HandleAdmit(id, peer, env.body_as_Admit()->clock());
    case wire::Body::ClockDone:
      if (!worker) break;
      if (!CurrentEpoch(peer, env.body_as_ClockDone()->epoch())) return;
      return HandleClockDone(peer, *env.body_as_ClockDone());
    case wire::Body::Committed:
      if (peer.role != wire::Role::Server) break;
      // A survivor's acks of clocks past the round it is rolling back to.
      if (recovering_) return;
      return HandleCommitted(*env.body_as_Committed());
    case wire::Body::SnapshotDone:
      if (peer.role != wire::Role::Server) break;
      if (recovering_) return;  // its round was abandoned
      return HandleSnapshotDone(*env.body_as_SnapshotDone());
    case wire::Body::Restored:
      if (peer.role != wire::Role::Server) break;
      return HandleRestored(peer, *env.body_as_Restored());
    case wire::Body::Evaluation:
      if (!worker && !evaluator) break;
      if (!CurrentEpoch(peer, env.body_as_Evaluation()->epoch())) return;
      return HandleEvaluation(id, *env.body_as_Evaluation());
    case wire::Body::Error: {
      const std::string text =
          flatbuffers::GetString(env.body_as_Error()->message());
      if ((worker || evaluator) && !peer.started) {
        return HandleWorkerError(id, peer, text);
      }
      if (!worker &&
          env.body_as_Error()->code() == wire::ErrorCode::RestoreFailed) {
        return HandleRestoreFailed(peer.rank, env.body_as_Error()->request_id(),
                                   text);
      }
      LS_LOG(Warning) << RoleName(peer.role) << " " << peer.rank
                      << " reported an error: " << text;
      return;
    }
    default:
      break;
  }
  RejectBadMessage(id, InvalidArgument(std::string("unexpected ") +
                                       BodyName(env.body_type()) + " from " +
                                       RoleName(peer.role)));
}

void Coordinator::ReplyHeartbeat(const std::string& id) {
  // Heartbeats go both ways, so peers notice a dead coordinator.
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateHeartbeat(fbb, recorder_->last_committed());
  Reply(id, FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(),
                           wire::Role::Coordinator, 0));
}

void Coordinator::Reply(const std::string& id, zmq::message_t header) {
  Message out;
  out.peer = id;
  out.header = std::move(header);
  Status sent = SendMessage(socket_, true, std::move(out));
  if (!sent.ok()) {
    LS_LOG(Warning) << "cannot reach peer: " << sent.message();
  }
}

void Coordinator::SendToServers(zmq::message_t& header) {
  for (const auto& id : server_ids_) {
    if (id.empty()) continue;  // lost, not back yet
    zmq::message_t copy;
    copy.copy(header);
    Reply(id, std::move(copy));
  }
}

void Coordinator::RejectBadMessage(const std::string& id, const Status& why) {
  ++bad_messages_;
  if (bad_log_budget_-- > 0) {
    LS_LOG(Warning) << "rejected a message (" << bad_messages_
                    << " so far): " << why.message();
  }
  Reply(id, MakeErrorHeader(ErrorCodeFor(why), why.message(), 0,
                            wire::Role::Coordinator, 0));
}

}  // namespace lockstep
