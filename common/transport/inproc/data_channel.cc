#include "common/transport/inproc/data_channel.h"

#include <chrono>
#include <thread>

#include "common/clock.h"
#include "common/transport/inproc/mailbox.h"

namespace lockstep {
namespace {

class InprocDataChannel : public DataChannel {
 public:
  InprocDataChannel(std::string endpoint, std::shared_ptr<InprocPortState> port,
                    std::shared_ptr<Mailbox> replies, std::string peer)
      : DataChannel(std::move(endpoint)),
        port_(std::move(port)),
        replies_(std::move(replies)),
        peer_(std::move(peer)) {}
  ~InprocDataChannel() override {
    replies_->Close();
    port_->Disconnect(peer_);
  }
  InprocDataChannel(const InprocDataChannel&) = delete;
  InprocDataChannel& operator=(const InprocDataChannel&) = delete;

  Status Send(Message&& msg) override {
    msg.peer = peer_;
    if (!port_->inbox().Put(std::move(msg))) {
      return Unavailable("the server closed the connection");
    }
    return Status::Ok();
  }

  StatusOr<bool> Receive(Message* out) override {
    if (replies_->Take(out)) return true;
    if (replies_->closed()) {
      return Unavailable("the server closed the connection");
    }
    return false;
  }

  zmq::pollitem_t PollItem() override {
    return {nullptr, replies_->fd(), ZMQ_POLLIN, 0};
  }

 private:
  std::shared_ptr<InprocPortState> port_;
  std::shared_ptr<Mailbox> replies_;
  std::string peer_;
};

}  // namespace

StatusOr<std::unique_ptr<DataChannel>> ConnectInprocChannel(
    const std::string& endpoint, double timeout_s) {
  const double deadline = NowSeconds() + timeout_s;
  std::shared_ptr<InprocPortState> port;
  while ((port = InprocRegistry::Process().Find(endpoint)) == nullptr) {
    if (NowSeconds() >= deadline) {
      return Unavailable("no inproc port bound as " + endpoint);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  LS_ASSIGN_OR_RETURN(std::shared_ptr<Mailbox> replies, Mailbox::Create());
  LS_ASSIGN_OR_RETURN(std::string peer, port->Connect(replies));
  return std::unique_ptr<DataChannel>(new InprocDataChannel(
      endpoint, std::move(port), std::move(replies), std::move(peer)));
}

}  // namespace lockstep
