#include "common/transport/zmq/data_port.h"

#include "common/transport/endpoint.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {
namespace {

class ZmqDataPort : public DataPort {
 public:
  ZmqDataPort(std::string bound, zmq::socket_t socket)
      : DataPort(std::move(bound)), socket_(std::move(socket)) {}

  size_t AddPollItems(std::vector<zmq::pollitem_t>* items) override {
    items->push_back({static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0});
    return 1;
  }
  void Process(const zmq::pollitem_t*) override {}
  bool Backlogged() const override { return false; }
  StatusOr<bool> Receive(Message* out) override {
    return ReceiveMessage(socket_, true, out);
  }
  Status Send(Message&& msg) override {
    return SendMessage(socket_, true, std::move(msg));
  }

 private:
  zmq::socket_t socket_;
};

}  // namespace

StatusOr<std::unique_ptr<DataPort>> BindZmqPort(const std::string& listen) {
  std::string bound;
  LS_ASSIGN_OR_RETURN(zmq::socket_t socket,
                      BindRouter(ZmqAddress(listen), &bound, kDataPlaneDomain));
  return std::unique_ptr<DataPort>(
      new ZmqDataPort("zmq+" + bound, std::move(socket)));
}

}  // namespace lockstep
