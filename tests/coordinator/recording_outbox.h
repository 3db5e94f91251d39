// An Outbox that keeps what the coordinator's components sent, for tests
// that drive them without a socket, and helpers that build the wire
// messages those components are fed.
#ifndef LOCKSTEP_TESTS_COORDINATOR_RECORDING_OUTBOX_H_
#define LOCKSTEP_TESTS_COORDINATOR_RECORDING_OUTBOX_H_

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/wire/message.h"
#include "coordinator/state/outbox.h"

namespace lockstep {

// One message sent: to whom, and its Envelope (verified when recorded).
// Copies share the bytes, so what envelope() and body() point to lives as
// long as the outbox keeps the message, even when read through a copy (a
// temporary vector from Of()).
struct SentMessage {
  std::string id;
  wire::Body type = wire::Body::NONE;
  std::shared_ptr<const std::string> bytes;

  const wire::Envelope* envelope() const {
    return flatbuffers::GetRoot<wire::Envelope>(bytes->data());
  }
  template <typename T>
  const T* body() const {
    return envelope()->body_as<T>();
  }
};

class RecordingOutbox : public Outbox {
 public:
  void Send(const std::string& id, zmq::message_t header) override {
    Message msg;
    msg.header = std::move(header);
    const Status verified = VerifyHeader(&msg);
    EXPECT_TRUE(verified.ok()) << verified.ToString();
    if (!verified.ok()) return;
    sent_.push_back(
        {id, msg.envelope->body_type(),
         std::make_shared<const std::string>(
             static_cast<const char*>(msg.header.data()), msg.header.size())});
  }

  // Every peer is connected until Disconnect.
  bool Connected(const std::string& id) override {
    return disconnected_.count(id) == 0;
  }
  void Disconnect(const std::string& id) { disconnected_.insert(id); }

  const std::vector<SentMessage>& sent() const { return sent_; }
  // The messages of body `type`, in the order sent.
  std::vector<SentMessage> Of(wire::Body type) const {
    std::vector<SentMessage> out;
    for (const auto& m : sent_) {
      if (m.type == type) out.push_back(m);
    }
    return out;
  }
  // The ids the messages of `type` went to, in order.
  std::vector<std::string> To(wire::Body type) const {
    std::vector<std::string> ids;
    for (const auto& m : Of(type)) ids.push_back(m.id);
    return ids;
  }
  void Clear() { sent_.clear(); }

 private:
  std::vector<SentMessage> sent_;
  std::set<std::string> disconnected_;
};

// A wire table built on its own (as a root), alive as long as this is.
template <typename T>
class WireTable {
 public:
  // `build` adds the table to the builder and returns its offset.
  template <typename Build>
  explicit WireTable(Build build) {
    fbb_.Finish(build(fbb_));
  }
  const T& operator*() const {
    return *flatbuffers::GetRoot<T>(fbb_.GetBufferPointer());
  }

 private:
  flatbuffers::FlatBufferBuilder fbb_{1024};
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_COORDINATOR_RECORDING_OUTBOX_H_
