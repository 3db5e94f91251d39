// ZeroMQ sockets for Lockstep's pattern: ROUTER to receive (coordinator and
// servers bind), DEALER to send (clients connect). Multipart messages whose
// payload frames move without copies.
// Thread-safety: a zmq::socket_t belongs to exactly one thread. The context
// returned by ProcessContext() is thread-safe.
#ifndef LOCKSTEP_COMMON_TRANSPORT_ZMQ_ZMQ_SOCKET_H_
#define LOCKSTEP_COMMON_TRANSPORT_ZMQ_ZMQ_SOCKET_H_

#include <chrono>
#include <string>
#include <zmq.hpp>

#include "common/security/job_keys.h"
#include "common/status.h"
#include "common/transport/zmq/zap_handler.h"
#include "common/wire/message.h"

namespace lockstep {

// The process-wide ZeroMQ context (created on first use).
zmq::context_t& ProcessContext();
// Closes the process-wide context after every socket is closed, waiting
// (at most each socket's linger time) until queued messages are delivered.
// Call once at the end of main; REQUIRES: no socket is still open.
void CloseProcessContext();

// Binds a ROUTER socket. `endpoint` may use port 0 ("tcp://127.0.0.1:0") to
// let the kernel pick a free port; the endpoint actually bound (with the
// real port) is stored in *bound. With a job key installed
// (transport_keys.h) it is a CURVE server under the ZAP handler's `domain`
// (zap_handler.h): only the roles that domain takes get in, and a
// connection that has not finished its handshake within
// kHandshakeDeadlineMs (transport_keys.h) is closed. A peer that sends a
// frame larger than `max_message_bytes` (>= 0) is disconnected before it
// is received (ZMQ_MAXMSGSIZE).
StatusOr<zmq::socket_t> BindRouter(const std::string& endpoint,
                                   std::string* bound,
                                   const char* domain = kControlPlaneDomain,
                                   int64_t max_message_bytes = -1);

// Connects a DEALER socket with `identity` as routing id (may be empty).
// With a job key installed it is a CURVE client of the peer holding
// `server`'s key (the coordinator, or a server's data port).
StatusOr<zmq::socket_t> ConnectDealer(const std::string& endpoint,
                                      const std::string& identity,
                                      KeyRole server = KeyRole::kCoordinator);

// The endpoint a peer should connect to: a wildcard host (0.0.0.0, *) in
// `bound` is replaced by `advertise_host`, or by this machine's host name
// when that is empty.
std::string AdvertisedEndpoint(const std::string& bound,
                               const std::string& advertise_host);

// Sends `msg` as one multipart message. On a ROUTER socket (`router`) the
// routing frame msg->peer goes first. Payload frames are moved, not copied.
Status SendMessage(zmq::socket_t& socket, bool router, Message&& msg);
// Sends a message of just `header` on a DEALER; when it cannot, logs that
// `peer` is unreachable and goes on (what the message was for is retried,
// or its loss noticed, by the sender's own timeouts).
void SendHeaderOrWarn(zmq::socket_t& socket, zmq::message_t header,
                      const std::string& peer);

// Receives one whole multipart message without blocking. Returns false when
// none is queued. Frames are placed in `out` unverified; call VerifyHeader
// next. out->role is the sender's authenticated role (ROUTER sockets under
// CURVE). A ROUTER message without a header frame is an error.
StatusOr<bool> ReceiveMessage(zmq::socket_t& socket, bool router, Message* out);

// zmq::poll that treats a signal interruption (EINTR) as "nothing ready"
// instead of throwing, so signal handlers can set their stop flags. Returns
// the number of ready items (0 on timeout or interruption).
int PollSockets(zmq::pollitem_t* items, size_t count,
                std::chrono::milliseconds timeout);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_ZMQ_ZMQ_SOCKET_H_
