#include "worker/worker_runtime.h"

#include <unistd.h>

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

void WorkerRuntime::RequestStop() { g_stop_requested = true; }
bool WorkerRuntime::StopRequested() { return g_stop_requested; }

WorkerRuntime::WorkerRuntime(WorkerOptions options)
    : options_(std::move(options)) {}

WorkerRuntime::~WorkerRuntime() = default;

StatusOr<std::unique_ptr<WorkerRuntime>> WorkerRuntime::Create(
    WorkerOptions options) {
  if (options.coordinator.empty()) {
    return InvalidArgument("--coordinator is required");
  }
  if (!(options.request_timeout_s > 0)) {
    return InvalidArgument("--request-timeout-s must be > 0");
  }
  std::unique_ptr<WorkerRuntime> w(new WorkerRuntime(std::move(options)));
  if (!w->options_.real_link.empty()) {
    LS_ASSIGN_OR_RETURN(w->real_link_, RealLink::Parse(w->options_.real_link));
  }
  if (!w->options_.hetero.empty()) {
    // Validated now (and its batch cap registered); re-seeded per rank in
    // Setup so transient slowdowns differ between workers.
    LS_ASSIGN_OR_RETURN(w->hetero_,
                        HeteroProfile::Parse(w->options_.hetero, 0));
  }
  LS_ASSIGN_OR_RETURN(w->coordinator_,
                      ConnectDealer(w->options_.coordinator, ""));
  return w;
}

Status WorkerRuntime::Run() {
  Status done = Train();
  // A job that ended while this worker waited is a normal end.
  if (!done.ok() && shutdown_finished_) return Status::Ok();
  return done;
}

Status WorkerRuntime::Train() {
  LS_RETURN_IF_ERROR(Register());
  int64_t clock = 0;
  while (true) {
    Status trained = TrainFrom(clock);
    if (!rollback_) return trained;
    LS_ASSIGN_OR_RETURN(clock, Rollback());
  }
}

StatusOr<int64_t> WorkerRuntime::Rollback() {
  Message msg = std::move(*rollback_);
  rollback_.reset();
  // The envelope pointer refers to the header's bytes, which a move may
  // relocate (ZeroMQ keeps small messages inline): verify it again.
  LS_RETURN_IF_ERROR(VerifyHeader(&msg));
  const auto* start = msg.envelope->body_as_Start();
  LS_RETURN_IF_ERROR(Start(*start));
  LS_LOG(Warning) << "the job was rolled back to a snapshot round: continuing "
                  << "at clock " << start->clock() << " (recovery epoch "
                  << epoch_ << ")";
  return start->clock();
}

Status WorkerRuntime::TrainFrom(int64_t first_clock) {
  for (int64_t clock = first_clock;; ++clock) {
    if (g_stop_requested) return Unavailable("interrupted by a signal");
    const double wait_start = NowSeconds();
    LS_ASSIGN_OR_RETURN(Admission admission, RequestAdmission(clock));
    if (admission.finished) return Finish(admission);
    if (admission.clock != clock) {
      LS_LOG(Info) << "moved from clock " << clock << " to the current clock "
                   << admission.clock;
    }
    clock = admission.clock;
    SetLogClock(clock);
    ClockTimes times;
    times.wait_s = NowSeconds() - wait_start;
    LS_RETURN_IF_ERROR(RunClock(admission, &times));
    SendClockDone(clock, admission.quota, times);
  }
}

StatusOr<WorkerRuntime::Admission> WorkerRuntime::RequestAdmission(
    int64_t clock) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateAdmit(fbb, clock, epoch_);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Admit, body.Union(),
                                   wire::Role::Worker,
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
    if (!a->go() || a->batch_quota() == 0) {
      return FailedPrecondition("admission to clock " + std::to_string(clock) +
                                " without a batch quota");
    }
    admission.quota = a->batch_quota();
    admission.offset = a->batch_offset();
    return admission;
  }
}

StatusOr<bool> WorkerRuntime::AwaitCoordinator(Message* msg,
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

StatusOr<bool> WorkerRuntime::ReceiveFromCoordinator(Message* msg) {
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

Status WorkerRuntime::CheckCoordinatorDuringRequest() {
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

Status WorkerRuntime::CheckCoordinatorAlive() {
  // Only once welcomed: before that the registration deadline applies.
  if (heartbeats_ == nullptr) return Status::Ok();
  const int64_t heard = std::max(last_heard_ms_, heartbeats_->last_reply_ms());
  const int64_t silent = NowMillis() - std::max(heard, welcomed_ms_);
  if (silent <= CoordinatorTimeoutMs()) return Status::Ok();
  return Unavailable("the coordinator at " + options_.coordinator +
                     " has been silent for " + std::to_string(silent) + " ms");
}

void WorkerRuntime::SendHeartbeat() {
  // Once welcomed, the heartbeat thread does this.
  if (heartbeats_ != nullptr || NowMillis() < next_heartbeat_ms_) return;
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateHeartbeat(fbb, 0);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(),
                                   wire::Role::Worker,
                                   static_cast<int>(rank_)));
  next_heartbeat_ms_ = NowMillis() + std::max<uint32_t>(job_.heartbeat_ms, 100);
}

int64_t WorkerRuntime::CoordinatorTimeoutMs() const {
  // Matches the coordinator's own rule for declaring a peer dead.
  return 10 * static_cast<int64_t>(std::max<uint32_t>(job_.heartbeat_ms, 100));
}

void WorkerRuntime::SendToCoordinator(zmq::message_t header) {
  Message out;
  out.header = std::move(header);
  Status sent = SendMessage(coordinator_, false, std::move(out));
  if (!sent.ok())
    LS_LOG(Warning) << "coordinator unreachable: " << sent.message();
}

void WorkerRuntime::SendClockDone(int64_t clock, uint32_t batch,
                                  const ClockTimes& t) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateClockDone(
      fbb, clock, batch, t.compute_s, t.push_s, t.pull_s, t.wait_s, t.loss,
      t.cpu_available, MemoryAvailable(), t.staleness, t.dropped, epoch_);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::ClockDone, body.Union(),
                                   wire::Role::Worker,
                                   static_cast<int>(rank_)));
}

}  // namespace lockstep
