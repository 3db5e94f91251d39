// A client's connection to one server shard's data port. The server's
// advertised endpoint picks the backend (see endpoint.h); the backends live
// in the parallel subfolders stream/, zmq/ and inproc/.
// Thread-safety: one thread at a time.
#ifndef LOCKSTEP_COMMON_TRANSPORT_DATA_CHANNEL_H_
#define LOCKSTEP_COMMON_TRANSPORT_DATA_CHANNEL_H_

#include <memory>
#include <string>
#include <zmq.hpp>

#include "common/security/peer_ticket.h"
#include "common/status.h"
#include "common/transport/endpoint.h"
#include "common/wire/message.h"

namespace lockstep {

class DataChannel {
 public:
  // Connects to `endpoint`; waits at most `timeout_s` for a direct
  // connection to be accepted (ZeroMQ connects in the background). With
  // `listening` the server is known to have been listening (it
  // registered): a direct connection it refuses means it is gone, and is
  // not waited for. With a job key installed, a direct connection proves
  // `ticket` (who this client is, peer_ticket.h; required there).
  static StatusOr<std::unique_ptr<DataChannel>> Connect(
      const std::string& endpoint, double timeout_s, bool listening = false,
      const PeerTicket* ticket = nullptr);
  virtual ~DataChannel() = default;

  // Sends one message (payload frames are not copied). Returns once the
  // transport owns it; may wait while the socket drains (at most the
  // connect timeout). Errors: the server is gone.
  virtual Status Send(Message&& msg) = 0;
  // Receives one whole message without blocking; false when none is ready.
  // After a poll reports the channel readable, call until false.
  virtual StatusOr<bool> Receive(Message* out) = 0;
  // What to poll for readability.
  virtual zmq::pollitem_t PollItem() = 0;

  const std::string& endpoint() const { return endpoint_; }

 protected:
  explicit DataChannel(std::string endpoint) : endpoint_(std::move(endpoint)) {}

 private:
  std::string endpoint_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_DATA_CHANNEL_H_
