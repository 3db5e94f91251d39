// Where the coordinator's components send their messages: one header
// frame to one peer, by routing id. The Coordinator's implementation sends
// on its ZeroMQ ROUTER socket; tests record what was sent
// (tests/coordinator/recording_outbox.h), so every component is driven
// without a socket.
// Thread-safety: implementations are used from the coordinator's thread
// only.
#ifndef LOCKSTEP_COORDINATOR_STATE_OUTBOX_H_
#define LOCKSTEP_COORDINATOR_STATE_OUTBOX_H_

#include <string>
#include <vector>
#include <zmq.hpp>

namespace lockstep {

class Outbox {
 public:
  virtual ~Outbox() = default;
  // Sends `header` (an Envelope frame) to the peer with routing id `id`.
  // A peer that cannot be reached is logged, never an error: its silence
  // is what liveness notices.
  virtual void Send(const std::string& id, zmq::message_t header) = 0;
  // Whether the peer with routing id `id` is still connected: a message it
  // ignores (a Heartbeat) can be sent to it. A process that died has
  // closed its connection, even before liveness declares it dead.
  virtual bool Connected(const std::string& id) = 0;

  // A copy of `header` to each of `ids` in order, skipping empty ids (a
  // lost server's slot, not back yet).
  void SendToEach(const std::vector<std::string>& ids, zmq::message_t& header) {
    for (const auto& id : ids) {
      if (id.empty()) continue;
      zmq::message_t copy;
      copy.copy(header);
      Send(id, std::move(copy));
    }
  }
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_STATE_OUTBOX_H_
