#include "common/transport/inproc/data_port.h"

#include <atomic>

#include "common/transport/inproc/mailbox.h"

namespace lockstep {
namespace {

class InprocDataPort : public DataPort {
 public:
  InprocDataPort(std::string bound, std::shared_ptr<InprocPortState> state)
      : DataPort(std::move(bound)), state_(std::move(state)) {}
  ~InprocDataPort() override {
    InprocRegistry::Process().Remove(bound());
    state_->Close();
  }
  InprocDataPort(const InprocDataPort&) = delete;
  InprocDataPort& operator=(const InprocDataPort&) = delete;

  size_t AddPollItems(std::vector<zmq::pollitem_t>* items) override {
    items->push_back({nullptr, state_->inbox().fd(), ZMQ_POLLIN, 0});
    return 1;
  }
  void Process(const zmq::pollitem_t*) override {}
  bool Backlogged() const override { return false; }

  StatusOr<bool> Receive(Message* out) override {
    return state_->inbox().Take(out);
  }

  Status Send(Message&& msg) override {
    const std::string peer = msg.peer;
    std::shared_ptr<Mailbox> replies = state_->Connection(peer);
    if (replies != nullptr && replies->Put(std::move(msg))) {
      return Status::Ok();
    }
    if (replies != nullptr) state_->Disconnect(peer);
    return Unavailable("the worker connection is closed");
  }

 private:
  std::shared_ptr<InprocPortState> state_;
};

// "inproc://" or "inproc://NAME:0" -> a name no other port has used.
std::string UniqueName(const std::string& listen) {
  static std::atomic<uint64_t> next{1};
  const bool pick =
      listen == "inproc://" || (listen.size() > 2 && listen.ends_with(":0"));
  if (!pick) return listen;
  const std::string base = listen == "inproc://"
                               ? "inproc://port"
                               : listen.substr(0, listen.size() - 2);
  return base + "-" + std::to_string(next++);
}

}  // namespace

StatusOr<std::unique_ptr<DataPort>> BindInprocPort(const std::string& listen) {
  const std::string name = UniqueName(listen);
  LS_ASSIGN_OR_RETURN(std::shared_ptr<Mailbox> inbox, Mailbox::Create());
  auto state = std::make_shared<InprocPortState>(std::move(inbox));
  LS_RETURN_IF_ERROR(InprocRegistry::Process().Add(name, state));
  return std::unique_ptr<DataPort>(new InprocDataPort(name, std::move(state)));
}

}  // namespace lockstep
