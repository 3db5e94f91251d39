#include "common/data_channel.h"

#include <unistd.h>

#include "common/direct_endpoint.h"
#include "common/direct_transport.h"
#include "common/zmq_socket.h"

namespace lockstep {
namespace {

constexpr const char kZmqPrefix[] = "zmq+";

class ZmqChannel : public DataChannel {
 public:
  ZmqChannel(std::string endpoint, zmq::socket_t socket)
      : DataChannel(std::move(endpoint)), socket_(std::move(socket)) {}

  Status Send(Message&& msg) override {
    return SendMessage(socket_, false, std::move(msg));
  }
  StatusOr<bool> Receive(Message* out) override {
    return ReceiveMessage(socket_, false, out);
  }
  zmq::pollitem_t PollItem() override {
    return {static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
  }

 private:
  zmq::socket_t socket_;
};

class DirectChannel : public DataChannel {
 public:
  DirectChannel(std::string endpoint, int fd, double timeout_s)
      : DataChannel(std::move(endpoint)), fd_(fd), timeout_s_(timeout_s) {}
  ~DirectChannel() override { close(fd_); }

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

  zmq::pollitem_t PollItem() override { return {nullptr, fd_, ZMQ_POLLIN, 0}; }

 private:
  int fd_;
  double timeout_s_;
  bool closed_ = false;
  FrameReader reader_;
  FrameWriter writer_;
};

}  // namespace

bool IsZmqDataEndpoint(const std::string& endpoint) {
  return endpoint.rfind(kZmqPrefix, 0) == 0;
}

std::string ZmqAddress(const std::string& endpoint) {
  return IsZmqDataEndpoint(endpoint) ? endpoint.substr(sizeof(kZmqPrefix) - 1)
                                     : endpoint;
}

std::string IpcSocketPath(const std::string& endpoint) {
  const std::string address = ZmqAddress(endpoint);
  return address.rfind("ipc://", 0) == 0 ? address.substr(6) : "";
}

StatusOr<std::unique_ptr<DataChannel>> DataChannel::Connect(
    const std::string& endpoint, double timeout_s) {
  if (IsZmqDataEndpoint(endpoint)) {
    LS_ASSIGN_OR_RETURN(zmq::socket_t socket,
                        ConnectDealer(ZmqAddress(endpoint), ""));
    return std::unique_ptr<DataChannel>(
        new ZmqChannel(endpoint, std::move(socket)));
  }
  LS_ASSIGN_OR_RETURN(int fd, ConnectDirect(endpoint, timeout_s));
  return std::unique_ptr<DataChannel>(
      new DirectChannel(endpoint, fd, timeout_s));
}

}  // namespace lockstep
