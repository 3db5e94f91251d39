#include "coordinator/coordinator.h"

#include <algorithm>
#include <atomic>

#include "common/clock.h"
#include "common/durable_file.h"
#include "common/http/process_health.h"
#include "common/logging.h"
#include "common/termination.h"
#include "common/transport/zmq/zmq_socket.h"
#include "coordinator/coordinator_impl.h"
#include "optimizers/optimizer.h"
#include "sync_policies/policy_registry.h"

namespace lockstep {
namespace {

std::atomic<bool> g_stop_requested{false};

}  // namespace

void Coordinator::RequestStop() { g_stop_requested = true; }

Coordinator::Coordinator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Coordinator::~Coordinator() = default;

const std::string& Coordinator::endpoint() const { return impl_->endpoint(); }

std::string Coordinator::metrics_url() const { return impl_->metrics_url(); }

Status Coordinator::Run() { return impl_->Run(); }

bool Coordinator::preempted() const { return impl_->preempted(); }

StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(
    CoordinatorOptions options) {
  // What the coordinator owns is checked now; the model and the data set
  // are the workers' to check when they load them.
  LS_RETURN_IF_ERROR(ValidateJobConfig(options.job));
  LS_RETURN_IF_ERROR(ResolveAutoDataOrder(&options.job));
  // Again with the order resolved: joiners need the global order.
  LS_RETURN_IF_ERROR(ValidateJobConfig(options.job));
  LS_RETURN_IF_ERROR(Optimizer::Validate(options.job));
  auto impl = std::make_unique<Impl>(std::move(options));
  LS_RETURN_IF_ERROR(impl->SetUp());
  return std::unique_ptr<Coordinator>(new Coordinator(std::move(impl)));
}

Status Coordinator::Impl::SetUp() {
  // As before the split: the policy is checked first, then the snapshots,
  // and only then does the run recorder open its files. Each component is
  // built after those it holds references to.
  const JobConfig& job = options_.job;
  LS_ASSIGN_OR_RETURN(std::unique_ptr<SyncPolicy> policy,
                      CreateSyncPolicy(job));
  rounds_ = std::make_unique<SnapshotRounds>(job, *this, members_, links_);
  LS_RETURN_IF_ERROR(rounds_->SetUp(options_.resume, options_.resume_round,
                                    options_.resume_if_present));
  LS_ASSIGN_OR_RETURN(recorder_,
                      RunRecorder::Create(options_.run_dir, job, policy->name(),
                                          rounds_->restore()));
  clock_ = std::make_unique<ClockDriver>(
      job, std::move(policy), *this, members_, tickets_, *recorder_, links_);
  recovery_ =
      std::make_unique<Recovery>(job, options_.register_timeout_s, *this, *this,
                                 members_, *rounds_, *clock_, epoch_);
  enrollment_ = std::make_unique<Enrollment>(
      options_.job, *this, *this, members_, *clock_, *rounds_, *recorder_,
      epoch_, recovery_->failover(), tickets_);
  const RoleKeys* keys = InstalledTransportKeys();
  bans_ = std::make_unique<CredentialBans>(
      options_.run_dir,
      keys != nullptr ? keys->public_key(KeyRole::kCoordinator) : "");
  LS_RETURN_IF_ERROR(bans_->Load());
  refusals_ = std::make_unique<PushRefusals>(job, *this, members_, *enrollment_,
                                             *bans_);
  metrics_text_ = std::make_unique<JobMetrics>(
      *recorder_, members_, *enrollment_, *recovery_, *clock_, *rounds_,
      *refusals_, access_);
  departures_ = std::make_unique<Departures>(options_.job, *this, members_,
                                             *rounds_, *enrollment_);
  liveness_ = std::make_unique<Liveness>(
      static_cast<int64_t>(job.heartbeat_ms) * options_.dead_after_heartbeats,
      options_.register_timeout_s * 1000, *this, members_, *recorder_,
      tickets_);
  links_.Connect(enrollment_.get(), clock_.get(), rounds_.get(),
                 recovery_.get(), recorder_.get());
  router_ = std::make_unique<MessageRouter>(
      MessageRouter::Components{members_, access_, *enrollment_, *recovery_,
                                *rounds_, *clock_, *liveness_, *departures_,
                                *refusals_, *bans_},
      *this, *this);
  LS_RETURN_IF_ERROR(BindControlPlane());
  return ServeMetrics();
}

Status Coordinator::Impl::BindControlPlane() {
  std::string bound;
  // Peers send the coordinator headers only: a larger frame is not
  // received at all.
  LS_ASSIGN_OR_RETURN(socket_,
                      BindRouter(options_.listen, &bound, kControlPlaneDomain,
                                 static_cast<int64_t>(kMaxHeaderBytes)));
  endpoint_ = AdvertisedEndpoint(bound, options_.advertise);
  // ZeroMQ drops a failed handshake without a word: counted and logged.
  LS_ASSIGN_OR_RETURN(handshakes_,
                      HandshakeWatch::Attach(socket_, "a peer", endpoint_,
                                             /*listening=*/true));
  access_.WatchHandshakes(handshakes_.get());
  if (!options_.run_dir.empty()) {
    // For tools that talk to the live job (lockstep-snapshot now).
    LS_RETURN_IF_ERROR(
        WriteFileDurably(options_.run_dir + "/endpoint", endpoint_ + "\n"));
  }
  return Status::Ok();
}

Status Coordinator::Impl::ServeMetrics() {
  if (!options_.metrics_listen.empty()) {
    std::string token;
    if (!options_.metrics_token_file.empty()) {
      LS_ASSIGN_OR_RETURN(token, ReadMetricsToken(options_.metrics_token_file));
    }
    LS_ASSIGN_OR_RETURN(metrics_, HttpEndpoint::Start(options_.metrics_listen,
                                                      std::move(token)));
    if (!options_.run_dir.empty()) {
      // Where to scrape this job, beside its endpoint.
      LS_RETURN_IF_ERROR(WriteFileDurably(options_.run_dir + "/metrics_url",
                                          metrics_->url() + "\n"));
    }
  }
  return Status::Ok();
}

Status Coordinator::Impl::Run() {
  const int64_t start_ms = NowMillis();
  // A quarter of a heartbeat: the stop flag, the deadlines and liveness are
  // looked at several times per heartbeat even when no message comes.
  const auto poll_ms = std::chrono::milliseconds(
      std::max<uint32_t>(10, options_.job.heartbeat_ms / 4));
  // Training being over is not enough: the job also waits (a bounded time)
  // for the round in flight, often the one of its final state, to be
  // reported, so what it leaves on disk is recorded in the manifest.
  ProcessHealth::SetReady(true);
  while (!TrainingDone() || !rounds_->Settled()) {
    ProcessHealth::Beat();
    if (g_stop_requested) {
      SendShutdown(wire::ShutdownKind::Aborted, "coordinator interrupted");
      return Unavailable("interrupted by a signal");
    }
    if (TerminationSignal::Requested()) {
      departures_->Preempt("the coordinator was terminated (SIGTERM)");
    }
    zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, poll_ms);
    handshakes_->Poll();
    HandleQueuedMessages();
    if (std::optional<Status> end = EndNow(start_ms)) return *end;
    if (!enrollment_->training()) SayWhatTheStartWaitsFor(start_ms);
    if (enrollment_->training()) recorder_->MaybePrintProgress(false);
    PublishMetrics(false);
  }
  PublishMetrics(true);
  rounds_->RecordFinished(recorder_->last_committed());
  SendShutdown(wire::ShutdownKind::Finished, "job finished");
  return Finish();
}

void Coordinator::Impl::HandleQueuedMessages() {
  // Every queued message is handled before liveness is checked, so a peer
  // is not declared dead while its messages wait in our own backlog.
  Message msg;
  while (true) {
    auto got = ReceiveMessage(socket_, true, &msg);
    if (!got.ok()) {
      ++bad_messages_;
      continue;
    }
    if (!*got) return;
    router_->Handle(msg);
  }
}

std::optional<Status> Coordinator::Impl::EndNow(int64_t start_ms) {
  // An abort ends the job only here, once the messages received so far
  // are handled (JobHost::Abort), and every peer is told why.
  if (!abort_status_.ok()) {
    SendShutdown(wire::ShutdownKind::Aborted,
                 "job aborted: " + abort_status_.message());
    return abort_status_;
  }
  if (auto end = departures_->Tick()) {
    preempted_ = end->kind == wire::ShutdownKind::Preempted;
    SendShutdown(end->kind, end->reason);
    return Unavailable(end->reason);
  }
  // The registration deadline covers the whole start: registering,
  // loading the data set and describing the model.
  if (!enrollment_->training() &&
      NowMillis() - start_ms > options_.register_timeout_s * 1000) {
    SendShutdown(wire::ShutdownKind::Aborted, "registration timed out");
    const std::string missing =
        StartWaitsFor(options_.job, enrollment_->start_progress());
    return DeadlineExceeded(
        "the job did not start within --register-timeout-s " +
        std::to_string(static_cast<int64_t>(options_.register_timeout_s)) +
        " s: " +
        (missing.empty() ? std::string("every role had come, but the job "
                                       "could not start (see above)")
                         : "it was still waiting for " + missing));
  }
  // A recovery that ran out of time ends the job; the peers are told, as
  // on every other abort, instead of finding the coordinator silent.
  if (Status alive = liveness_->Check(*enrollment_, *recovery_); !alive.ok()) {
    SendShutdown(wire::ShutdownKind::Aborted,
                 "job aborted: " + alive.message());
    return alive;
  }
  return std::nullopt;
}

void Coordinator::Impl::SayWhatTheStartWaitsFor(int64_t start_ms) {
  // Now and then, so a role forgotten or started wrong is named long
  // before the registration deadline.
  const int64_t now = NowMillis();
  if (now - start_ms < kStartWaitSayMs ||
      now - start_wait_said_ms_ < kStartWaitSayMs) {
    return;
  }
  start_wait_said_ms_ = now;
  const std::string missing =
      StartWaitsFor(options_.job, enrollment_->start_progress());
  if (!missing.empty()) {
    LS_LOG(Info) << "waiting for " << missing << " (" << (now - start_ms) / 1000
                 << " s of --register-timeout-s "
                 << static_cast<int64_t>(options_.register_timeout_s) << ")";
  }
}

Status Coordinator::Impl::Finish() {
  return recorder_->Finish(metrics_text_->SummaryFields(bad_messages_),
                           clock_->policy().Metrics());
}

void Coordinator::Impl::PublishMetrics(bool force) {
  if (metrics_ == nullptr) return;
  const double now = NowSeconds();
  if (!force && now - metrics_published_s_ < 0.5) return;
  metrics_published_s_ = now;
  metrics_->Publish(metrics_text_->Exposition(bad_messages_));
}

void Coordinator::Impl::Send(const std::string& id, zmq::message_t header) {
  Message out;
  out.peer = id;
  out.header = std::move(header);
  Status sent = SendMessage(socket_, true, std::move(out));
  if (!sent.ok()) {
    LS_LOG(Warning) << "cannot reach peer: " << sent.message();
  }
}

bool Coordinator::Impl::Connected(const std::string& id) {
  Message probe;
  probe.peer = id;
  probe.header = MakeHeartbeatHeader(0, wire::Role::Coordinator, 0);
  // ROUTER_MANDATORY: an id whose connection closed cannot be sent to.
  return SendMessage(socket_, true, std::move(probe)).ok();
}

void Coordinator::Impl::RejectBadMessage(const std::string& id,
                                         const Status& why) {
  ++bad_messages_;
  // Every bad message is counted and answered, but only the first few are
  // logged: a misbehaving peer must not flood the coordinator's log.
  if (bad_log_budget_-- > 0) {
    LS_LOG(Warning) << "rejected a message (" << bad_messages_
                    << " so far): " << why.message();
  }
  Send(id, MakeErrorHeader(ErrorCodeFor(why), why.message(), 0,
                           wire::Role::Coordinator, 0));
}

void Coordinator::Impl::SendShutdown(wire::ShutdownKind kind,
                                     const std::string& reason) {
  LS_LOG(Info) << "shutting down: " << reason;
  zmq::message_t header = MakeShutdownHeader(kind, reason);
  for (const auto& [id, peer] : members_.peers()) {
    zmq::message_t copy;
    copy.copy(header);
    Send(id, std::move(copy));
  }
}

}  // namespace lockstep
