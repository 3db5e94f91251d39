// WorkerSession: the control plane — admission, the coordinator's
// messages, heartbeats, clock and evaluation reports, the end of the job.
#include "worker/worker_session.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>

#include "common/clock.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {
namespace {

std::atomic<bool> g_stop_requested{false};

// MemAvailable / MemTotal from /proc/meminfo; 1 when unreadable.
double MemoryAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double value = 0, total = 0, available = -1;
  std::string unit;
  while (in >> key >> value >> unit) {
    if (key == "MemTotal:") total = value;
    if (key == "MemAvailable:") available = value;
  }
  return total > 0 && available >= 0 ? available / total : 1.0;
}

}  // namespace

void WorkerSession::RequestStop() { g_stop_requested = true; }
bool WorkerSession::StopRequested() { return g_stop_requested; }

WorkerSession::WorkerSession(WorkerOptions options)
    : options_(std::move(options)) {}

WorkerSession::~WorkerSession() = default;

StatusOr<std::unique_ptr<WorkerSession>> WorkerSession::Create(
    WorkerOptions options) {
  if (options.coordinator.empty()) {
    return InvalidArgument("--coordinator is required");
  }
  if (!(options.request_timeout_s > 0)) {
    return InvalidArgument("--request-timeout-s must be > 0");
  }
  std::unique_ptr<WorkerSession> s(new WorkerSession(std::move(options)));
  if (!s->options_.real_link.empty()) {
    LS_ASSIGN_OR_RETURN(s->real_link_, RealLink::Parse(s->options_.real_link));
  }
  if (!s->options_.hetero.empty()) {
    // Validated now (and its batch cap registered); re-seeded per rank in
    // Setup so transient slowdowns differ between workers.
    LS_ASSIGN_OR_RETURN(s->hetero_,
                        HeteroProfile::Parse(s->options_.hetero, 0));
  }
  LS_ASSIGN_OR_RETURN(s->coordinator_,
                      ConnectDealer(s->options_.coordinator, ""));
  return s;
}

StatusOr<WorkerSession::Admission> WorkerSession::Admit(int64_t clock) {
  if (rollback_.has_value()) {
    LS_ASSIGN_OR_RETURN(clock, ApplyRollback());
  }
  if (g_stop_requested) return Unavailable("interrupted by a signal");
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateAdmit(fbb, clock, epoch_);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Admit, body.Union(), role(),
                                   static_cast<int>(rank_)));
  Message msg;
  while (true) {
    // Admission may take long (a policy waits for slow workers); only a
    // silent coordinator ends the wait.
    LS_ASSIGN_OR_RETURN(bool got, AwaitCoordinator(&msg, INT64_MAX));
    if (!got) continue;
    if (msg.envelope->body_type() != wire::Body::Admission) continue;
    const auto* a = msg.envelope->body_as_Admission();
    Admission admission;
    admission.finished = a->finished();
    admission.evaluate = a->evaluate();
    admission.clock = a->clock();
    if (admission.finished) return admission;
    if (a->clock() < clock) continue;  // an answer to an older request
    if (options_.evaluator) {
      // The evaluator is admitted to evaluation points only; its next
      // Pull reads that point (eval_point_).
      eval_point_ = admission.clock;
      SetLogClock(admission.clock);
      return admission;
    }
    if (!a->go() || a->batch_quota() == 0) {
      return FailedPrecondition("admission to clock " + std::to_string(clock) +
                                " without a batch quota");
    }
    admission.quota = a->batch_quota();
    admission.offset = a->batch_offset();
    if (admission.clock != clock) {
      LS_LOG(Info) << "moved from clock " << clock << " to the current clock "
                   << admission.clock;
    }
    SetLogClock(admission.clock);
    if (real_link_.has_value()) {
      LS_RETURN_IF_ERROR(real_link_->Apply(admission.clock, hetero_.link()));
    }
    return admission;
  }
}

StatusOr<std::optional<int64_t>> WorkerSession::AwaitEnd() {
  Message msg;
  while (true) {
    StatusOr<bool> got = AwaitCoordinator(&msg, INT64_MAX);
    if (!got.ok() && shutdown_finished_) return std::optional<int64_t>();
    LS_RETURN_IF_ERROR(got.status());
    if (!*got || msg.envelope->body_type() != wire::Body::Admission) continue;
    const auto* a = msg.envelope->body_as_Admission();
    if (a->finished() && a->evaluate()) {
      return std::optional<int64_t>(a->clock());
    }
  }
}

StatusOr<bool> WorkerSession::AwaitBody(wire::Body type, int64_t deadline_ms,
                                        Message* msg) {
  while (true) {
    LS_ASSIGN_OR_RETURN(bool got, AwaitCoordinator(msg, deadline_ms));
    if (!got) return false;
    if (msg->envelope->body_type() == type) return true;
  }
}

StatusOr<bool> WorkerSession::AwaitCoordinator(Message* msg,
                                               int64_t deadline_ms) {
  while (NowMillis() < deadline_ms) {
    if (g_stop_requested) return Unavailable("interrupted by a signal");
    SendHeartbeat();
    LS_RETURN_IF_ERROR(CheckCoordinatorAlive());
    zmq::pollitem_t item{static_cast<void*>(coordinator_), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, std::chrono::milliseconds(50));
    LS_ASSIGN_OR_RETURN(bool got, ReceiveFromCoordinator(msg));
    if (got) return true;
  }
  return false;
}

StatusOr<bool> WorkerSession::ReceiveFromCoordinator(Message* msg) {
  while (true) {
    LS_ASSIGN_OR_RETURN(bool got, ReceiveMessage(coordinator_, false, msg));
    if (!got) return false;
    last_heard_ms_ = NowMillis();
    Status ok = VerifyHeader(msg);
    if (!ok.ok()) {
      ++bad_messages_;
      LS_LOG(Warning) << "dropped a bad message from the coordinator ("
                      << bad_messages_ << " so far): " << ok.message();
      continue;
    }
    const auto type = msg->envelope->body_type();
    if (type == wire::Body::Heartbeat) continue;
    if (type == wire::Body::Shutdown) {
      const std::string reason =
          flatbuffers::GetString(msg->envelope->body_as_Shutdown()->reason());
      if (reason == "job finished") shutdown_finished_ = true;
      return Unavailable("coordinator shut the job down: " + reason);
    }
    if (type == wire::Body::Error) {
      return FailedPrecondition(
          "coordinator refused this worker: " +
          flatbuffers::GetString(msg->envelope->body_as_Error()->message()));
    }
    if (type == wire::Body::Start && ps_ != nullptr) {
      // A rollback: whatever this worker waits for is abandoned.
      rollback_ = std::move(*msg);
      return Unavailable("the job was rolled back");
    }
    return true;
  }
}

Status WorkerSession::CheckCoordinatorDuringRequest() {
  // A request waiting out a lost server must not outlive the coordinator.
  if (g_stop_requested) return Unavailable("interrupted by a signal");
  LS_RETURN_IF_ERROR(CheckCoordinatorAlive());
  Message msg;
  LS_ASSIGN_OR_RETURN(bool got, ReceiveFromCoordinator(&msg));
  if (got) {
    LS_LOG(Warning) << "ignored a " << BodyName(msg.envelope->body_type())
                    << " from the coordinator during a request";
  }
  return Status::Ok();
}

Status WorkerSession::CheckCoordinatorAlive() {
  // Only once welcomed: before that the registration deadline applies.
  if (heartbeats_ == nullptr) return Status::Ok();
  const int64_t heard = std::max(last_heard_ms_, heartbeats_->last_reply_ms());
  const int64_t silent = NowMillis() - std::max(heard, welcomed_ms_);
  if (silent <= CoordinatorTimeoutMs()) return Status::Ok();
  return Unavailable("the coordinator at " + options_.coordinator +
                     " has been silent for " + std::to_string(silent) + " ms");
}

void WorkerSession::SendHeartbeat() {
  // Once welcomed, the heartbeat thread does this.
  if (heartbeats_ != nullptr || NowMillis() < next_heartbeat_ms_) return;
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateHeartbeat(fbb, 0);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(),
                                   role(), static_cast<int>(rank_)));
  next_heartbeat_ms_ = NowMillis() + std::max<uint32_t>(job_.heartbeat_ms, 100);
}

int64_t WorkerSession::CoordinatorTimeoutMs() const {
  // Matches the coordinator's own rule for declaring a peer dead.
  return 10 * static_cast<int64_t>(std::max<uint32_t>(job_.heartbeat_ms, 100));
}

void WorkerSession::SendToCoordinator(zmq::message_t header) {
  Message out;
  out.header = std::move(header);
  Status sent = SendMessage(coordinator_, false, std::move(out));
  if (!sent.ok())
    LS_LOG(Warning) << "coordinator unreachable: " << sent.message();
}

void WorkerSession::ClockDone(int64_t clock, uint32_t batch,
                              const ClockTimes& t) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateClockDone(
      fbb, clock, batch, t.compute_s, t.push_s, t.pull_s, t.wait_s, t.loss,
      t.cpu_available, MemoryAvailable(), t.staleness, t.dropped, epoch_);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::ClockDone, body.Union(),
                                   role(), static_cast<int>(rank_)));
}

void WorkerSession::ReportEvaluation(int64_t clock, double loss,
                                     double accuracy, uint64_t samples,
                                     double auc, bool final, double seconds) {
  // The evaluator reports the point its values were at (PullEvalPoint).
  if (!final && read_point_ >= 0) clock = read_point_;
  read_point_ = -1;
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateEvaluation(fbb, clock, loss, accuracy, samples, final,
                                     epoch_, seconds);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Evaluation, body.Union(),
                                   role(), static_cast<int>(rank_)));
  LS_LOG(Info) << (final ? "final " : "") << "test accuracy " << accuracy
               << ", loss " << loss
               << (std::isnan(auc) ? std::string()
                                   : ", auc " + std::to_string(auc));
}

}  // namespace lockstep
