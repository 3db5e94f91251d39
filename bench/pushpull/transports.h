// The data-plane stacks `lockstep-bench pushpull --transport` measures, and
// the medium each runs over:
//   tcp, ipc          Lockstep's direct transport (common/transport/stream/)
//                     over TCP loopback / a Unix-domain socket
//   zmq-tcp, zmq-ipc  the ZeroMQ data port (ROUTER/DEALER) over the same
//   ...+auth          the same with the job's keys (the servers run with
//                     --keys: the direct transport's handshake, CurveZMQ);
//                     without a suffix the servers run --security off
//   tcp+aead,         the direct transport with keys of an aead data
//   ipc+aead          plane: the handshake, then every record sealed
// Baselines (raw TCP, raw ZeroMQ, raw streaming) are keyed by the medium,
// so tcp and zmq-tcp rows are compared with the same measurements.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_BENCH_PUSHPULL_TRANSPORTS_H_
#define LOCKSTEP_BENCH_PUSHPULL_TRANSPORTS_H_

#include <string>
#include <vector>

namespace lockstep::bench {

inline const std::vector<std::string>& KnownTransports() {
  static const std::vector<std::string> kKnown = {
      "tcp",      "ipc",          "zmq-tcp",      "zmq-ipc",  "tcp+auth",
      "ipc+auth", "zmq-tcp+auth", "zmq-ipc+auth", "tcp+aead", "ipc+aead"};
  return kKnown;
}

// The data-plane mode a stack's keys name ("auth", "aead"), or "" for the
// stacks without keys.
inline std::string KeyedMode(const std::string& transport) {
  const auto plus = transport.rfind('+');
  return plus == std::string::npos ? "" : transport.substr(plus + 1);
}

// True for the stacks that run with the job's keys ("...+auth", "+aead").
inline bool IsAuthenticated(const std::string& transport) {
  return !KeyedMode(transport).empty();
}

// True for the ZeroMQ data port ("zmq-tcp", "zmq-ipc").
inline bool IsZmqTransport(const std::string& transport) {
  return transport.rfind("zmq-", 0) == 0;
}

// "tcp" or "ipc": the medium under `transport`.
inline std::string TransportMedium(const std::string& transport) {
  std::string medium =
      IsZmqTransport(transport) ? transport.substr(4) : transport;
  if (IsAuthenticated(transport)) medium.resize(medium.rfind('+'));
  return medium;
}

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_TRANSPORTS_H_
