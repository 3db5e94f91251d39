#include "common/transport/stream/data_channel.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/clock.h"
#include "common/transport/stream/frame_reader.h"
#include "common/transport/stream/frame_writer.h"
#include "common/transport/stream/handshake.h"
#include "common/transport/stream/socket.h"
#include "common/transport/transport_keys.h"

namespace lockstep {
namespace {

class StreamDataChannel : public DataChannel {
 public:
  StreamDataChannel(std::string endpoint, int fd, double timeout_s)
      : DataChannel(std::move(endpoint)), fd_(fd), timeout_s_(timeout_s) {}
  ~StreamDataChannel() override { close(fd_); }
  StreamDataChannel(const StreamDataChannel&) = delete;
  StreamDataChannel& operator=(const StreamDataChannel&) = delete;

  Status Send(Message&& msg) override {
    if (closed_) return Unavailable("the server closed the connection");
    LS_RETURN_IF_ERROR(writer_.Enqueue(std::move(msg)));
    // The server never blocks on its own writes, so it keeps reading and
    // this completes; waiting here keeps the client single-threaded.
    return FlushBlocking(fd_, writer_, timeout_s_);
  }

  StatusOr<bool> Receive(Message* out) override {
    if (closed_) return Unavailable("the server closed the connection");
    LS_ASSIGN_OR_RETURN(FrameReader::Result r, reader_.Read(fd_, out));
    if (r == FrameReader::Result::kClosed) {
      closed_ = true;
      return Unavailable("the server closed the connection");
    }
    return r == FrameReader::Result::kMessage;
  }

  // The aead data plane: seals what it sends, opens what it receives.
  Status Seal(const SessionKeys& session) {
    LS_ASSIGN_OR_RETURN(RecordCiphers ciphers,
                        CiphersFor(session, HandshakeSide::kClient));
    writer_.Seal(std::move(ciphers.seal));
    reader_.Open(std::move(ciphers.open));
    return Status::Ok();
  }

  zmq::pollitem_t PollItem() override { return {nullptr, fd_, ZMQ_POLLIN, 0}; }

 private:
  int fd_;
  double timeout_s_;
  bool closed_ = false;
  FrameReader reader_;
  FrameWriter writer_;
};

}  // namespace

StatusOr<std::unique_ptr<DataChannel>> ConnectStreamChannel(
    const std::string& endpoint, double timeout_s, bool listening,
    const PeerTicket* ticket) {
  const RoleKeys* keys = InstalledTransportKeys();
  if (keys != nullptr && ticket == nullptr) {
    return FailedPrecondition(
        endpoint +
        ": no ticket to prove on the data plane (a worker is given one "
        "when it registers)");
  }
  const double deadline = NowSeconds() + timeout_s;
  LS_ASSIGN_OR_RETURN(int fd, ConnectDirect(endpoint, timeout_s, listening));
  auto channel = std::make_unique<StreamDataChannel>(endpoint, fd, timeout_s);
  if (keys != nullptr) {
    auto session = ClientHandshake(fd, keys->data_plane, *ticket, timeout_s);
    // A server busy with other handshakes (peers holding connections open)
    // closes new ones before its hello: asked again until the deadline.
    for (double wait_s = 0.01;
         session.status().code() == StatusCode::kUnavailable &&
         NowSeconds() + wait_s < deadline;
         wait_s = std::min(wait_s * 2, 0.5)) {
      std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
      LS_ASSIGN_OR_RETURN(
          fd, ConnectDirect(endpoint, deadline - NowSeconds(), listening));
      channel = std::make_unique<StreamDataChannel>(endpoint, fd, timeout_s);
      session = ClientHandshake(fd, keys->data_plane, *ticket,
                                deadline - NowSeconds());
    }
    if (!session.ok()) return session.status().WithContext(endpoint);
    if (session->mode == DataSecurity::kAead) {
      LS_RETURN_IF_ERROR(channel->Seal(*session).WithContext(endpoint));
    }
  }
  return std::unique_ptr<DataChannel>(std::move(channel));
}

}  // namespace lockstep
