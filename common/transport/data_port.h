// A server's data port: where workers' pulls and pushes arrive and replies
// leave. The endpoint picks the backend (see endpoint.h); the backends live
// in the parallel subfolders stream/, zmq/ and inproc/.
// The owner polls the port's items with its other sockets, calls Process
// with the same items, then takes every message Receive returns. Replies
// are routed by Message::peer and never block: what the socket does not
// take now is queued and written as the peer drains it.
// Thread-safety: one thread only.
#ifndef LOCKSTEP_COMMON_TRANSPORT_DATA_PORT_H_
#define LOCKSTEP_COMMON_TRANSPORT_DATA_PORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/status.h"
#include "common/wire/message.h"

namespace lockstep {

class DataPort {
 public:
  // Binds `listen`: "tcp://host:port" / "ipc:///path" (direct transport),
  // the same with a "zmq+" prefix (ZeroMQ ROUTER), or "inproc://name"
  // (threads of this process). Port 0 picks a free port.
  static StatusOr<std::unique_ptr<DataPort>> Bind(const std::string& listen);
  virtual ~DataPort() = default;

  // The endpoint actually bound (real port), in the form given to Bind.
  const std::string& bound() const { return bound_; }

  // Appends what to poll; returns how many items were appended.
  virtual size_t AddPollItems(std::vector<zmq::pollitem_t>* items) = 0;
  // Accepts, reads and writes after a poll; `items` points at the items
  // AddPollItems appended (with revents set).
  virtual void Process(const zmq::pollitem_t* items) = 0;
  // The next received message (peer set), without blocking; false when
  // none. Errors: a malformed message (counted; the caller may reply).
  virtual StatusOr<bool> Receive(Message* out) = 0;
  // Queues `msg` to msg.peer. Errors: no such peer (it disconnected, or
  // was dropped for leaving more than kMaxQueuedReplyBytes unread).
  virtual Status Send(Message&& msg) = 0;
  // Sends `msg`, whose payload frame `frame` only borrows its bytes (a
  // zmq::message_t made over memory it does not free): they stay valid and
  // unchanged until the next ReclaimLent call. The direct transport writes
  // them to the socket straight from there, saving a copy of a large pull
  // reply; the other backends copy the frame now. Errors: as Send; `frame`
  // out of range.
  virtual Status SendLending(Message&& msg, size_t frame);
  // Copies the bytes of lent frames that are not yet written, so that the
  // memory they borrow may change. Call before it does.
  virtual void ReclaimLent() {}

  // Payload frames a peer may send, at most (the job's model bounds them:
  // ServerProcess). The direct transport closes a connection that declares
  // a larger one before reserving anything; the others ignore it.
  virtual void LimitPayload(uint64_t bytes) { (void)bytes; }
  // Replies a connection that proved a worker's or the evaluator's ticket
  // may leave unread before it is closed (at most kMaxQueuedReplyBytes;
  // the job's model bounds it: ServerProcess). A server's connections
  // (replication) keep kMaxQueuedReplyBytes. The direct transport applies
  // it; the others ignore it.
  virtual void LimitUnreadReplies(uint64_t bytes) { (void)bytes; }

  // True when received messages wait beyond what one Process call takes in
  // (a peer sending faster than they are handled): poll without waiting.
  virtual bool Backlogged() const = 0;

  // Process takes at most this many messages from one connection per call,
  // so one busy peer cannot starve the others or the coordinator.
  static constexpr int kMaxMessagesPerRead = 64;
  // Replies a peer leaves unread beyond this drop its connection (a
  // worker's: beyond LimitUnreadReplies).
  static constexpr uint64_t kMaxQueuedReplyBytes = uint64_t{4} << 30;

  // Connections closed because their byte stream was not Lockstep framing.
  uint64_t bad_streams() const { return bad_streams_; }
  // Connections refused because they did not prove they hold the job's
  // key, and those closed for not finishing the handshake in time.
  uint64_t refused_connections() const { return refused_connections_; }
  uint64_t handshake_timeouts() const { return handshake_timeouts_; }

 protected:
  explicit DataPort(std::string bound) : bound_(std::move(bound)) {}

  // Backends count connections they closed for bad framing, or refused,
  // here.
  uint64_t bad_streams_ = 0;
  uint64_t refused_connections_ = 0;
  uint64_t handshake_timeouts_ = 0;

 private:
  std::string bound_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_DATA_PORT_H_
