#include "server/server_coordinator_link.h"

#include <atomic>
#include <chrono>

#include "common/clock.h"
#include "common/http/process_health.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {
namespace {

std::atomic<bool> g_server_stop{false};

}  // namespace

void ServerCoordinatorLink::RequestStop() { g_server_stop = true; }
bool ServerCoordinatorLink::StopRequested() { return g_server_stop; }

ServerCoordinatorLink::ServerCoordinatorLink(std::string coordinator,
                                             std::string data_endpoint,
                                             double reattach_s)
    : coordinator_(std::move(coordinator)),
      data_endpoint_(std::move(data_endpoint)),
      watch_(coordinator_, reattach_s) {}

StatusOr<std::unique_ptr<ServerCoordinatorLink>> ServerCoordinatorLink::Connect(
    const std::string& coordinator, std::string data_endpoint,
    double reattach_s) {
  std::unique_ptr<ServerCoordinatorLink> link(new ServerCoordinatorLink(
      coordinator, std::move(data_endpoint), reattach_s));
  LS_ASSIGN_OR_RETURN(link->socket_, ConnectDealer(coordinator, ""));
  LS_ASSIGN_OR_RETURN(link->handshake_,
                      HandshakeWatch::Attach(link->socket_, "the coordinator",
                                             coordinator, /*listening=*/false));
  return link;
}

void ServerCoordinatorLink::Send(zmq::message_t header) {
  SendHeaderOrWarn(socket_, std::move(header), "coordinator");
}

void ServerCoordinatorLink::Register(int rank, int64_t applied_clock) {
  Send(MakeRegisterHeader(wire::Role::Server, rank, data_endpoint_,
                          applied_clock));
}

StatusOr<Message> ServerCoordinatorLink::AwaitWelcome(int rank_hint,
                                                      double timeout_s) {
  const int64_t deadline = NowMillis() + static_cast<int64_t>(timeout_s * 1000);
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
    if (g_server_stop) return Unavailable("interrupted by a signal");
    LS_RETURN_IF_ERROR(CheckTerminated(rank_hint));
    handshake_->Poll();
    LS_RETURN_IF_ERROR(handshake_->Refusal());
    if (NowMillis() - last_heard > (heard ? 10 : 30) * kBeatMs) {
      return Unavailable("the coordinator at " + coordinator_ +
                         " went silent before welcoming this server");
    }
    if (NowMillis() >= next_beat) {
      Send(MakeHeartbeatHeader(-1, wire::Role::Server, rank_hint));
      next_beat = NowMillis() + kBeatMs;
    }
    zmq::pollitem_t item = PollItem();
    PollSockets(&item, 1, std::chrono::milliseconds(100));
    auto got = ReceiveMessage(socket_, false, &msg);
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
    if (type == wire::Body::Welcome) return msg;
    if (type == wire::Body::Shutdown) {
      return FailedPrecondition(
          "the coordinator ended the job before welcoming this server: " +
          TakeShutdown(*msg.envelope->body_as_Shutdown()));
    }
    if (type == wire::Body::Error) {
      return FailedPrecondition(
          "coordinator refused this server: " +
          flatbuffers::GetString(msg.envelope->body_as_Error()->message()));
    }
  }
  return DeadlineExceeded("no welcome from the coordinator at " + coordinator_);
}

void ServerCoordinatorLink::Serving(int rank, uint32_t heartbeat_ms) {
  rank_ = rank;
  heartbeat_ms_ = heartbeat_ms;
  next_heartbeat_ms_ = 0;
  // The coordinator's own rule for declaring a peer dead.
  watch_.set_heartbeat_ms(heartbeat_ms);
  watch_.Welcomed(NowMillis());
  handshake_->Stop();  // the coordinator took this key
  ProcessHealth::SetReady(true);
}

void ServerCoordinatorLink::Welcomed() { watch_.Welcomed(NowMillis()); }

StatusOr<bool> ServerCoordinatorLink::Receive(Message* msg) {
  while (true) {
    auto got = ReceiveMessage(socket_, false, msg);
    if (!got.ok() || !*got) return false;
    watch_.Heard(NowMillis());
    Status ok = VerifyHeader(msg);
    if (!ok.ok()) {
      ++bad_messages_;
      LS_LOG(Warning) << "dropped a bad message from the coordinator: "
                      << ok.message();
      continue;
    }
    const auto type = msg->envelope->body_type();
    if (type == wire::Body::Heartbeat) continue;
    if (type != wire::Body::Error) {
      // A commit or a round's start comes only from a coordinator that
      // knows this server: it was silent, not gone. (A new one's Welcome
      // closes the window through Welcomed.)
      if (watch_.reattaching() && type != wire::Body::Welcome) {
        watch_.StillKnown(NowMillis());
      }
      return true;
    }
    const auto* error = msg->envelope->body_as_Error();
    if (error->code() != wire::ErrorCode::NotMember) {
      LS_LOG(Warning) << "coordinator error: "
                      << flatbuffers::GetString(error->message());
      continue;
    }
    // A new coordinator process (or one that gave this server up):
    // register again, or end, so that a supervisor starts it again.
    if (!watch_.Forgotten(NowMillis())) {
      return Unavailable("the coordinator at " + coordinator_ +
                         " no longer knows this server");
    }
  }
}

Status ServerCoordinatorLink::Tick(const std::function<int64_t()>& applied,
                                   bool offer_state) {
  const int64_t now = NowMillis();
  // A lost coordinator ends the server, or (with a re-attach window) the
  // server serves on and registers again for its shard.
  LS_RETURN_IF_ERROR(watch_.Check(now));
  if (watch_.RegisterDue(now)) Register(rank_, offer_state ? applied() : -1);
  if (now >= next_heartbeat_ms_) {
    Send(MakeHeartbeatHeader(applied(), wire::Role::Server, rank_));
    next_heartbeat_ms_ = now + heartbeat_ms_;
  }
  return Status::Ok();
}

Status ServerCoordinatorLink::CheckTerminated(int rank) {
  if (termination_.TellNow()) {
    // The shard stays: a preemption round of the job needs its part.
    LS_LOG(Warning) << "terminated (SIGTERM); serving until the coordinator "
                       "ends the job";
    Send(MakeLeaveHeader("terminated (SIGTERM)", wire::Role::Server, rank));
  }
  return termination_.CheckExpired("the job");
}

std::string ServerCoordinatorLink::TakeShutdown(
    const wire::Shutdown& shutdown) {
  shutdown_ = shutdown.kind();
  return flatbuffers::GetString(shutdown.reason());
}

}  // namespace lockstep
