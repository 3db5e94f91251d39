#include "worker/coordinator_link.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/clock.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {
namespace {

std::atomic<bool> g_stop_requested{false};

}  // namespace

void CoordinatorLink::RequestStop() { g_stop_requested = true; }
bool CoordinatorLink::StopRequested() { return g_stop_requested; }
const std::atomic<bool>* CoordinatorLink::stop_flag() {
  return &g_stop_requested;
}

StatusOr<std::unique_ptr<CoordinatorLink>> CoordinatorLink::Connect(
    const std::string& endpoint, wire::Role role, double reattach_s) {
  std::unique_ptr<CoordinatorLink> link(
      new CoordinatorLink(endpoint, role, reattach_s));
  LS_ASSIGN_OR_RETURN(link->socket_, ConnectDealer(endpoint, ""));
  LS_ASSIGN_OR_RETURN(link->handshake_,
                      HandshakeWatch::Attach(link->socket_, "the coordinator",
                                             endpoint, /*listening=*/false));
  return link;
}

Status CoordinatorLink::Welcomed(const wire::Welcome& welcome,
                                 uint32_t heartbeat_ms) {
  rank_ = welcome.rank();
  heartbeat_ms_ = heartbeat_ms;
  LS_RETURN_IF_ERROR(TakeTicket(welcome));
  welcomed_ms_ = NowMillis();
  handshake_->Stop();  // the coordinator took this key
  watch_.set_heartbeat_ms(heartbeat_ms);
  watch_.Welcomed(welcomed_ms_);
  return Status::Ok();
}

Status CoordinatorLink::TakeTicket(const wire::Welcome& welcome) {
  ticket_.reset();
  if (welcome.ticket_secret() != nullptr) {
    // Who this registration is on the data plane (peer_ticket.h).
    ticket_.emplace();
    ticket_->role = role_ == wire::Role::Evaluator ? TicketRole::kEvaluator
                                                   : TicketRole::kWorker;
    ticket_->rank = static_cast<int32_t>(rank_);
    ticket_->incarnation = welcome.ticket_incarnation();
    ticket_->secret = BytesOf(welcome.ticket_secret());
  }
  heartbeats_.reset();  // a thread proving an older ticket
  LS_ASSIGN_OR_RETURN(
      heartbeats_,
      HeartbeatThread::Start(endpoint_, role_, rank_, heartbeat_ms_, ticket_));
  return Status::Ok();
}

void CoordinatorLink::Send(zmq::message_t header) {
  SendHeaderOrWarn(socket_, std::move(header), "coordinator");
}

void CoordinatorLink::SendRegister(int rank_hint) {
  Send(MakeRegisterHeader(role_, rank_hint));
}

void CoordinatorLink::RememberDescribe(const zmq::message_t& header) {
  describe_.emplace(header.data(), header.size());
}

StatusOr<bool> CoordinatorLink::AwaitBody(wire::Body type, int64_t deadline_ms,
                                          Message* msg) {
  while (true) {
    LS_ASSIGN_OR_RETURN(bool got, Await(msg, deadline_ms));
    if (!got) return false;
    if (msg->envelope->body_type() == type) return true;
  }
}

StatusOr<bool> CoordinatorLink::Await(Message* msg, int64_t deadline_ms) {
  while (NowMillis() < deadline_ms) {
    if (g_stop_requested) return Unavailable("interrupted by a signal");
    LS_RETURN_IF_ERROR(CheckTerminated());
    handshake_->Poll();
    LS_RETURN_IF_ERROR(handshake_->Refusal());
    SendHeartbeat();
    LS_RETURN_IF_ERROR(CheckAlive());
    zmq::pollitem_t item = PollItem();
    PollSockets(&item, 1, std::chrono::milliseconds(50));
    LS_ASSIGN_OR_RETURN(bool got, Receive(msg));
    if (got) return true;
  }
  return false;
}

StatusOr<bool> CoordinatorLink::Receive(Message* msg) {
  while (true) {
    LS_ASSIGN_OR_RETURN(bool got, ReceiveMessage(socket_, false, msg));
    if (!got) return false;
    watch_.Heard(NowMillis());
    Status ok = VerifyHeader(msg);
    if (!ok.ok()) {
      ++bad_messages_;
      LS_LOG(Warning) << "dropped a bad message from the coordinator ("
                      << bad_messages_ << " so far): " << ok.message();
      continue;
    }
    if (watch_.reattaching()) {
      LS_ASSIGN_OR_RETURN(const bool taken, HandleReattach(*msg));
      if (taken) continue;
    }
    const auto type = msg->envelope->body_type();
    if (type == wire::Body::Heartbeat) continue;
    if (type == wire::Body::Reroute) {
      // Taken by the data plane's next wait (PsClient).
      const auto* reroute = msg->envelope->body_as_Reroute();
      reroutes_.emplace_back(reroute->shard(),
                             flatbuffers::GetString(reroute->endpoint()));
      continue;
    }
    if (type == wire::Body::Shutdown) {
      const auto* shutdown = msg->envelope->body_as_Shutdown();
      shutdown_ = shutdown->kind();
      return Unavailable("coordinator shut the job down: " +
                         flatbuffers::GetString(shutdown->reason()));
    }
    if (type == wire::Body::Error && training_ &&
        msg->envelope->body_as_Error()->code() == wire::ErrorCode::NotMember) {
      // A new coordinator process: register again (or end, without a
      // re-attach window).
      if (watch_.Forgotten(NowMillis())) continue;
      return Unavailable("the coordinator at " + endpoint_ +
                         " no longer knows this worker");
    }
    if (type == wire::Body::Error) {
      return FailedPrecondition(
          "coordinator refused this worker: " +
          flatbuffers::GetString(msg->envelope->body_as_Error()->message()));
    }
    if (type == wire::Body::Start && training_) {
      // A rollback: whatever this worker waits for is abandoned. After a
      // re-attach, the restarted coordinator's start.
      if (watch_.reattaching()) {
        welcomed_ms_ = NowMillis();
        watch_.Welcomed(welcomed_ms_);
      }
      rollback_ = std::move(*msg);
      return Unavailable("the job was rolled back");
    }
    return true;
  }
}

StatusOr<Message> CoordinatorLink::TakeRollback() {
  Message msg = std::move(*rollback_);
  rollback_.reset();
  // The envelope pointer refers to the header's bytes, which a move may
  // relocate (ZeroMQ keeps small messages inline): verify it again.
  LS_RETURN_IF_ERROR(VerifyHeader(&msg));
  return msg;
}

Status CoordinatorLink::CheckDuringRequest() {
  // A request waiting out a lost server must not outlive the coordinator.
  if (g_stop_requested) return Unavailable("interrupted by a signal");
  LS_RETURN_IF_ERROR(CheckTerminated());
  LS_RETURN_IF_ERROR(CheckAlive());
  Message msg;
  LS_ASSIGN_OR_RETURN(bool got, Receive(&msg));
  if (got) {
    LS_LOG(Warning) << "ignored a " << BodyName(msg.envelope->body_type())
                    << " from the coordinator during a request";
  }
  return Status::Ok();
}

Status CoordinatorLink::CheckTerminated() {
  if (termination_.TellNow()) {
    // The coordinator decides: this worker leaves a job that goes on, or
    // the whole job is preempted and everyone hears Shutdown(Preempted).
    LS_LOG(Warning) << "terminated (SIGTERM); leaving the job";
    Send(MakeLeaveHeader("terminated (SIGTERM)", role_,
                         static_cast<int>(rank_)));
  }
  return termination_.CheckExpired("this worker's part");
}

Status CoordinatorLink::AwaitShutdown() {
  Message msg;
  while (true) {
    // Await ends on the Shutdown, or CheckTerminated on the grace's end.
    LS_ASSIGN_OR_RETURN(bool got, Await(&msg, INT64_MAX));
    (void)got;
  }
}

Status CoordinatorLink::CheckAlive() {
  // Only once welcomed: before that the registration deadline applies.
  if (heartbeats_ == nullptr) return Status::Ok();
  const int64_t now = NowMillis();
  watch_.Heard(heartbeats_->last_reply_ms());
  // A NotMember answer to a heartbeat since the last welcome: a new
  // coordinator process.
  if (training_ && heartbeats_->not_member_ms() > welcomed_ms_ &&
      !watch_.Forgotten(now)) {
    return Unavailable("the coordinator at " + endpoint_ +
                       " no longer knows this worker");
  }
  LS_RETURN_IF_ERROR(watch_.Check(now));
  if (!watch_.reattaching()) return Status::Ok();
  if (!training_) {
    return Unavailable("lost the coordinator at " + endpoint_ +
                       " before training started");
  }
  if (watch_.RegisterDue(now)) SendRegister(static_cast<int>(rank_));
  return Status::Ok();
}

StatusOr<bool> CoordinatorLink::HandleReattach(const Message& msg) {
  switch (msg.envelope->body_type()) {
    case wire::Body::Welcome: {
      const uint32_t rank = msg.envelope->body_as_Welcome()->rank();
      if (rank != rank_) {
        return FailedPrecondition(
            "the restarted coordinator welcomed this worker as rank " +
            std::to_string(rank) + ", not " + std::to_string(rank_));
      }
      // This registration's ticket: the Start's data channels prove it
      // (the restarted coordinator admits and seals for it alone).
      LS_RETURN_IF_ERROR(TakeTicket(*msg.envelope->body_as_Welcome()));
      // Then its Start, once every worker described itself again.
      if (describe_.has_value()) {
        Send(zmq::message_t(describe_->data(), describe_->size()));
      }
      return true;
    }
    case wire::Body::Start:
    case wire::Body::Shutdown:
      return false;  // handled as always
    case wire::Body::Heartbeat:
    case wire::Body::Error:
      // Answers to what was sent to the old coordinator (NotMember
      // errors) and heartbeats: a new coordinator's Start is awaited.
      return true;
    default:
      // What a coordinator sends only to its members (an admission): it
      // still knows this worker, which only heard nothing for a while.
      welcomed_ms_ = NowMillis();
      watch_.StillKnown(welcomed_ms_);
      return false;
  }
}

void CoordinatorLink::SendHeartbeat() {
  // Once welcomed, the heartbeat thread does this.
  if (heartbeats_ != nullptr || NowMillis() < next_heartbeat_ms_) return;
  Send(MakeHeartbeatHeader(0, role_, static_cast<int>(rank_)));
  next_heartbeat_ms_ = NowMillis() + std::max<uint32_t>(heartbeat_ms_, 100);
}

JobEnding CoordinatorLink::ending() const {
  if (!shutdown_) return JobEnding::kNone;
  switch (*shutdown_) {
    case wire::ShutdownKind::Finished:
      return JobEnding::kFinished;
    case wire::ShutdownKind::Preempted:
      return JobEnding::kPreempted;
    case wire::ShutdownKind::Released:
      return JobEnding::kReleased;
    case wire::ShutdownKind::Aborted:
      return JobEnding::kAborted;
    case wire::ShutdownKind::Removed:
      return JobEnding::kRemoved;
  }
  return JobEnding::kNone;
}

}  // namespace lockstep
