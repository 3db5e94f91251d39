#include "server/coordinator/coordinator.h"

#include <algorithm>
#include <atomic>

#include "common/clock.h"
#include "common/logging.h"
#include "common/model_spec.h"
#include "common/transport/zmq/zmq_socket.h"
#include "sync_policies/policy_registry.h"

namespace lockstep {
namespace {

std::atomic<bool> g_stop_requested{false};

const char* RoleName(wire::Role role) { return wire::EnumNameRole(role); }

}  // namespace

void Coordinator::RequestStop() { g_stop_requested = true; }

Coordinator::Coordinator(CoordinatorOptions options, KeyLayout layout,
                         LrSchedule schedule)
    : options_(std::move(options)),
      layout_(std::move(layout)),
      schedule_(schedule) {}

Coordinator::~Coordinator() = default;

StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(
    CoordinatorOptions options) {
  const JobConfig& job = options.job;
  LS_RETURN_IF_ERROR(ValidateJobConfig(job));
  LS_ASSIGN_OR_RETURN(ModelSpec spec,
                      ParseModelSpec(job.model, job.input_dim, job.classes));
  LS_ASSIGN_OR_RETURN(
      KeyLayout layout,
      KeyLayout::Build(spec.Tensors(), job.servers, spec.sparse_dim));
  LS_ASSIGN_OR_RETURN(
      LrSchedule schedule,
      LrSchedule::Parse(job.lr_schedule, job.lr, job.max_clocks));
  std::unique_ptr<Coordinator> c(
      new Coordinator(std::move(options), std::move(layout), schedule));
  LS_ASSIGN_OR_RETURN(c->policy_, CreateSyncPolicy(c->options_.job));
  LS_ASSIGN_OR_RETURN(c->recorder_,
                      RunRecorder::Create(c->options_.run_dir, c->options_.job,
                                          c->policy_->name()));
  std::string bound;
  LS_ASSIGN_OR_RETURN(c->socket_, BindRouter(c->options_.listen, &bound));
  c->endpoint_ = AdvertisedEndpoint(bound, c->options_.advertise);
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
  while (!TrainingDone()) {
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
  line("lockstep_bad_messages_total", static_cast<double>(bad_messages_));
  line("lockstep_policy_decision_seconds_total", policy_seconds_);
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
  switch (env->body_type()) {
    case wire::Body::Heartbeat:
      return ReplyHeartbeat(msg.peer);
    case wire::Body::Admit:
      if (peer.role != wire::Role::Worker) break;
      return HandleAdmit(msg.peer, peer, env->body_as_Admit()->clock());
    case wire::Body::ClockDone:
      if (peer.role != wire::Role::Worker) break;
      return HandleClockDone(peer, *env->body_as_ClockDone());
    case wire::Body::Committed:
      if (peer.role != wire::Role::Server) break;
      return HandleCommitted(*env->body_as_Committed());
    case wire::Body::Evaluation:
      if (peer.role != wire::Role::Worker) break;
      return HandleEvaluation(peer, *env->body_as_Evaluation());
    case wire::Body::Error:
      LS_LOG(Warning) << RoleName(peer.role) << " " << peer.rank
                      << " reported an error: "
                      << flatbuffers::GetString(
                             env->body_as_Error()->message());
      return;
    default:
      break;
  }
  RejectBadMessage(msg.peer, InvalidArgument(std::string("unexpected ") +
                                             BodyName(env->body_type()) +
                                             " from " + RoleName(peer.role)));
}

void Coordinator::HandleRegister(const std::string& id,
                                 const wire::Register& reg) {
  if (peers_.count(id) != 0) return;  // a duplicate: already welcomed
  const bool is_server = reg.role() == wire::Role::Server;
  if (!is_server && reg.role() != wire::Role::Worker) {
    RejectBadMessage(id, InvalidArgument("only servers and workers register"));
    return;
  }
  auto& ids = is_server ? server_ids_ : worker_ids_;
  const uint32_t want = is_server ? options_.job.servers : options_.job.workers;
  if (ids.size() >= want || (training_ && is_server)) {
    Reply(id, MakeErrorHeader(wire::ErrorCode::BadRequest,
                              std::string("job already has all its ") +
                                  (is_server ? "servers" : "workers"),
                              0, wire::Role::Coordinator, 0));
    return;
  }
  if (is_server && flatbuffers::GetString(reg.endpoint()).empty()) {
    RejectBadMessage(id, InvalidArgument("server registered without endpoint"));
    return;
  }
  Peer peer;
  peer.role = reg.role();
  peer.last_seen_ms = NowMillis();
  peer.rank_hint = reg.rank_hint();
  peer.endpoint = flatbuffers::GetString(reg.endpoint());
  peer.host = flatbuffers::GetString(reg.host());
  if (reg.capabilities() != nullptr) {
    for (const auto* cap : *reg.capabilities()) {
      unsigned long v = 0;
      if (std::sscanf(cap->c_str(), "max_batch=%lu", &v) == 1) {
        peer.caps.max_batch = static_cast<uint32_t>(v);
      }
    }
  }
  peers_[id] = peer;
  ids.push_back(id);
  if (training_) {
    JoinRunningJob(id, peers_[id]);
    return;
  }
  LS_LOG(Info) << RoleName(reg.role()) << " registered from "
               << flatbuffers::GetString(reg.host()) << " pid " << reg.pid()
               << " (" << server_ids_.size() << "/" << options_.job.servers
               << " servers, " << worker_ids_.size() << "/"
               << options_.job.workers << " workers)";
  StartTrainingIfReady();
}

void Coordinator::HandleAdmit(const std::string& id, Peer& peer,
                              int64_t clock) {
  if (!training_ || clock < 0) {
    RejectBadMessage(id, FailedPrecondition("admission before training"));
    return;
  }
  if (!recorder_started_) {
    // Time zero is the first admission request, after data loading.
    recorder_->Start();
    recorder_started_ = true;
  }
  if (peer.finished) {
    AdmissionDecision done;
    done.clock = options_.job.max_clocks;
    SendAdmission(id, peer, done);
    return;
  }
  auto decision = Timed([&] { return policy_->Admit(peer.rank, clock); });
  if (decision) {
    SendAdmission(id, peer, *decision);
  } else {
    peer.pending_admit = clock;
  }
}

void Coordinator::SendAdmission(const std::string& id, Peer& peer,
                                const AdmissionDecision& decision) {
  peer.pending_admit.reset();
  const JobConfig& job = options_.job;
  const bool finished = decision.clock >= job.max_clocks;
  const bool evaluate = !finished && job.eval_every > 0 && decision.clock > 0 &&
                        decision.clock % job.eval_every == 0 &&
                        peer.rank == Evaluator();
  peer.clock = decision.clock;
  if (finished) peer.finished = true;
  flatbuffers::FlatBufferBuilder fbb(128);
  const double epoch = static_cast<double>(decision.clock) * job.GlobalBatch() /
                       job.train_samples;
  auto body = wire::CreateAdmission(
      fbb, decision.clock, !finished, finished, finished ? 0 : decision.batch,
      epoch, finished ? 0 : decision.batch_offset, evaluate);
  Reply(id, FinishEnvelope(fbb, wire::Body::Admission, body.Union(),
                           wire::Role::Coordinator, 0));
  if (finished) MaybeRequestFinalEvaluation();
}

void Coordinator::HandleClockDone(Peer& peer, const wire::ClockDone& done) {
  ClockReport report;
  report.worker = static_cast<uint32_t>(peer.rank);
  report.clock = done.clock();
  report.batch = done.batch();
  report.compute_s = done.compute_s();
  report.push_s = done.push_s();
  report.pull_s = done.pull_s();
  report.wait_s = done.wait_s();
  report.loss = done.loss();
  report.cpu_available = done.cpu_available();
  report.mem_available = done.mem_available();
  recorder_->RecordClock(report, done.staleness(), done.dropped());
  if (policy_->apply_mode() == ApplyMode::kOnArrival) {
    // Applied on arrival: the clock's samples count now (unless dropped).
    if (done.dropped() == 0) {
      recorder_->RecordCommit(report.clock, report.batch, report.loss);
    }
  } else {
    reports_[report.clock][report.worker] = {report.batch, report.loss};
  }
  IssueCommits(Timed([&] { return policy_->OnClockDone(report); }));
  AnswerPendingAdmissions();
}

void Coordinator::IssueCommits(const std::vector<CommitDecision>& commits) {
  for (const auto& commit : commits) {
    flatbuffers::FlatBufferBuilder fbb(256);
    auto workers = fbb.CreateVector(commit.workers);
    const double lr = schedule_.RateAt(commit.clock);
    auto body = wire::CreateCommit(fbb, commit.clock, workers, lr);
    zmq::message_t header = FinishEnvelope(
        fbb, wire::Body::Commit, body.Union(), wire::Role::Coordinator, 0);
    for (const auto& id : server_ids_) {
      zmq::message_t copy;
      copy.copy(header);
      Reply(id, std::move(copy));
    }
    uint64_t samples = 0;
    double loss_sum = 0;
    const auto& reported = reports_[commit.clock];
    for (uint32_t w : commit.workers) {
      auto it = reported.find(w);
      if (it == reported.end()) continue;
      samples += it->second.batch;
      loss_sum += it->second.loss * it->second.batch;
    }
    reports_.erase(reports_.begin(), reports_.upper_bound(commit.clock));
    recorder_->RecordCommit(commit.clock, samples,
                            samples > 0 ? loss_sum / samples : NAN);
    SetLogClock(commit.clock);
  }
}

void Coordinator::AnswerPendingAdmissions() {
  for (const auto& id : worker_ids_) {
    Peer& peer = peers_[id];
    if (!peer.pending_admit) continue;
    auto decision =
        Timed([&] { return policy_->Admit(peer.rank, *peer.pending_admit); });
    if (decision) SendAdmission(id, peer, *decision);
  }
}

void Coordinator::HandleCommitted(const wire::Committed& committed) {
  const int64_t clock = committed.clock();
  if (++committed_acks_[clock] < options_.job.servers) return;
  committed_acks_.erase(clock);
  fully_applied_ = std::max(fully_applied_, clock);
}

void Coordinator::HandleEvaluation(const Peer& peer,
                                   const wire::Evaluation& eval) {
  recorder_->RecordEvaluation(eval.clock(), eval.test_loss(),
                              eval.test_accuracy(), eval.final());
  LS_LOG(Info) << "evaluation at clock " << eval.clock() << ": test loss "
               << eval.test_loss() << ", test accuracy " << eval.test_accuracy()
               << " over " << eval.samples() << " samples"
               << (eval.final() ? " (final)" : "");
  if (eval.final() && peer.rank == final_evaluator_) {
    final_eval_received_ = true;
  }
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
