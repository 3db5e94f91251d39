#include "common/transport/zmq/data_channel.h"

#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {
namespace {

class ZmqDataChannel : public DataChannel {
 public:
  ZmqDataChannel(std::string endpoint, zmq::socket_t socket)
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

}  // namespace

StatusOr<std::unique_ptr<DataChannel>> ConnectZmqChannel(
    const std::string& endpoint) {
  LS_ASSIGN_OR_RETURN(
      zmq::socket_t socket,
      ConnectDealer(ZmqAddress(endpoint), "", KeyRole::kServer));
  return std::unique_ptr<DataChannel>(
      new ZmqDataChannel(endpoint, std::move(socket)));
}

}  // namespace lockstep
