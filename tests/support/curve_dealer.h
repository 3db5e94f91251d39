// A ZeroMQ DEALER that holds any CurveZMQ client key (or none), for tests
// that play a peer - honest or not - against a CURVE server.
// Thread-safety: the socket belongs to the calling thread.
#ifndef LOCKSTEP_TESTS_SUPPORT_CURVE_DEALER_H_
#define LOCKSTEP_TESTS_SUPPORT_CURVE_DEALER_H_

#include <string>
#include <zmq.hpp>

#include "common/security/job_keys.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {

// Connects to `endpoint` holding `client`'s key, trusting the server whose
// public key is `server_public`; `client` null: a plaintext client.
inline zmq::socket_t CurveDealer(const std::string& endpoint,
                                 const RoleKeys* client,
                                 const std::string& server_public) {
  zmq::socket_t socket(ProcessContext(), zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  if (client != nullptr) {
    socket.set(zmq::sockopt::curve_serverkey, server_public);
    socket.set(zmq::sockopt::curve_publickey, client->public_key(client->role));
    socket.set(zmq::sockopt::curve_secretkey, client->secret);
  }
  socket.connect(endpoint);
  return socket;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_CURVE_DEALER_H_
