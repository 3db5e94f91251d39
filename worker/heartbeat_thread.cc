#include "worker/heartbeat_thread.h"

#include "common/clock.h"
#include "common/http/process_health.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"

namespace lockstep {

HeartbeatThread::HeartbeatThread(std::string coordinator, wire::Role role,
                                 uint32_t rank, uint32_t interval_ms,
                                 const std::optional<PeerTicket>& ticket)
    : coordinator_(std::move(coordinator)),
      role_(role),
      rank_(rank),
      interval_ms_(interval_ms),
      incarnation_(ticket ? ticket->incarnation : 0),
      proof_(ticket ? HeartbeatProof(*ticket) : std::string()) {}

StatusOr<std::unique_ptr<HeartbeatThread>> HeartbeatThread::Start(
    const std::string& coordinator, wire::Role role, uint32_t rank,
    uint32_t interval_ms, const std::optional<PeerTicket>& ticket) {
  std::unique_ptr<HeartbeatThread> h(new HeartbeatThread(
      coordinator, role, rank, std::max<uint32_t>(interval_ms, 10), ticket));
  // Connected here, so an unusable endpoint fails on this thread, and
  // handed over whole to the heartbeat thread (its start is the memory
  // barrier a socket that changes threads needs): a socket made only to
  // try the endpoint would break off its handshake, which the coordinator
  // counts as a refused connection.
  LS_ASSIGN_OR_RETURN(zmq::socket_t socket, ConnectDealer(coordinator, ""));
  h->thread_ = std::thread([raw = h.get(), who = CurrentLogIdentity(),
                            socket = std::move(socket)]() mutable {
    SetLogIdentity(who);
    raw->Loop(socket);
  });
  return h;
}

HeartbeatThread::~HeartbeatThread() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void HeartbeatThread::Loop(zmq::socket_t& socket) {
  int64_t next = 0;
  Message msg;
  while (!stop_) {
    ProcessHealth::Beat();
    if (NowMillis() >= next) {
      flatbuffers::FlatBufferBuilder fbb(128);
      auto body =
          wire::CreateHeartbeat(fbb, 0, incarnation_, BytesField(fbb, proof_));
      Message out;
      out.header = FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(),
                                  role_, static_cast<int>(rank_));
      (void)SendMessage(socket, false, std::move(out));
      next = NowMillis() + interval_ms_;
    }
    zmq::pollitem_t item{static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, std::chrono::milliseconds(20));
    while (true) {
      auto got = ReceiveMessage(socket, false, &msg);
      if (!got.ok() || !*got) break;
      if (!VerifyHeader(&msg).ok()) continue;
      if (msg.envelope->body_type() == wire::Body::Heartbeat) {
        last_reply_ms_ = NowMillis();
      } else if (msg.envelope->body_type() == wire::Body::Error &&
                 msg.envelope->body_as_Error()->code() ==
                     wire::ErrorCode::NotMember) {
        not_member_ms_ = NowMillis();
      }
    }
  }
}

}  // namespace lockstep
