// The data-plane stacks `lockstep-bench pushpull --transport` measures, and
// the medium each runs over:
//   tcp, ipc          Lockstep's direct transport (common/transport/stream/)
//                     over TCP loopback / a Unix-domain socket
//   zmq-tcp, zmq-ipc  the ZeroMQ data port (ROUTER/DEALER) over the same
//   ...+auth          the same with the job's keys (the servers run with
//                     --keys: the direct transport's handshake, CurveZMQ);
//                     without the suffix the servers run --security off
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
      "tcp",      "ipc",      "zmq-tcp",      "zmq-ipc",
      "tcp+auth", "ipc+auth", "zmq-tcp+auth", "zmq-ipc+auth"};
  return kKnown;
}

// True for the stacks that run with the job's keys ("...+auth").
inline bool IsAuthenticated(const std::string& transport) {
  const std::string suffix = "+auth";
  return transport.size() > suffix.size() &&
         transport.compare(transport.size() - suffix.size(), suffix.size(),
                           suffix) == 0;
}

// True for the ZeroMQ data port ("zmq-tcp", "zmq-ipc").
inline bool IsZmqTransport(const std::string& transport) {
  return transport.rfind("zmq-", 0) == 0;
}

// "tcp" or "ipc": the medium under `transport`.
inline std::string TransportMedium(const std::string& transport) {
  std::string medium =
      IsZmqTransport(transport) ? transport.substr(4) : transport;
  if (IsAuthenticated(transport)) medium.resize(medium.size() - 5);
  return medium;
}

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_TRANSPORTS_H_
