// Sockets for Lockstep's direct data transport (stream/stream_format.h):
// parsing endpoints, listening, connecting and accepting.
// Endpoints: "tcp://host:port" (port 0 picks a free port when binding;
// host "*" or "0.0.0.0" binds every interface) and "ipc:///path" (a
// Unix-domain socket file).
// Thread-safety: free functions; safe concurrently.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_SOCKET_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_SOCKET_H_

#include <string>

#include "common/status.h"

namespace lockstep {

struct DirectAddress {
  bool ipc = false;
  std::string host;  // tcp
  int port = 0;      // tcp
  std::string path;  // ipc
};

// Parses "tcp://host:port" or "ipc:///path". Errors name the endpoint.
StatusOr<DirectAddress> ParseDirectEndpoint(const std::string& endpoint);

// Binds and listens; *bound gets the endpoint with the real port. The fd
// is non-blocking and close-on-exec. An ipc path left by a dead process is
// replaced.
StatusOr<int> ListenDirect(const std::string& endpoint, std::string* bound);

// Connects, retrying until `timeout_s` passes (a server may still be
// starting; an unreachable host cannot hold it longer), and returns a
// non-blocking fd with TCP_NODELAY set. With `listening` the server is
// known to have been listening: a refused connection (no socket file, for
// ipc) means it is gone, and ends the wait at once.
StatusOr<int> ConnectDirect(const std::string& endpoint, double timeout_s,
                            bool listening = false);

// Accepts one pending connection of `listener`: a non-blocking fd, or -1
// when none is pending or none can be taken (errno: EAGAIN, or EMFILE when
// the process is out of descriptors).
int AcceptDirect(int listener);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_SOCKET_H_
