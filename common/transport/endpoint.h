// Data-plane endpoints and which transport backend serves each:
//   "tcp://host:port", "ipc:///path"          stream/  (Lockstep's direct
//                                             transport over TCP or a
//                                             Unix-domain socket)
//   "zmq+tcp://host:port", "zmq+ipc:///path"  zmq/     (a ZeroMQ DEALER to a
//                                             ROUTER)
//   "inproc://name"                           inproc/  (threads of one
//                                             process; for tests)
// Thread-safety: pure functions.
#ifndef LOCKSTEP_COMMON_TRANSPORT_ENDPOINT_H_
#define LOCKSTEP_COMMON_TRANSPORT_ENDPOINT_H_

#include <string>

namespace lockstep {

enum class TransportBackend { kStream, kZmq, kInproc };

// The backend that serves `endpoint` (its scheme decides; anything not
// "zmq+" or "inproc://" goes to the stream backend, which rejects what it
// cannot parse).
TransportBackend BackendOf(const std::string& endpoint);

// True for endpoints served by ZeroMQ ("zmq+" prefix).
bool IsZmqDataEndpoint(const std::string& endpoint);
// The endpoint without its "zmq+" prefix (what ZeroMQ itself understands).
std::string ZmqAddress(const std::string& endpoint);
// The socket file of an ipc endpoint of either transport ("ipc:///p" or
// "zmq+ipc:///p" -> "/p"); empty for any other endpoint.
std::string IpcSocketPath(const std::string& endpoint);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_ENDPOINT_H_
