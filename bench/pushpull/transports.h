// The data-plane stacks `lockstep-bench pushpull --transport` measures, and
// the medium each runs over:
//   tcp, ipc          Lockstep's direct transport (common/transport/stream/)
//                     over TCP loopback / a Unix-domain socket
//   zmq-tcp, zmq-ipc  the ZeroMQ data port (ROUTER/DEALER) over the same
// Baselines (raw TCP, raw ZeroMQ, raw streaming) are keyed by the medium,
// so tcp and zmq-tcp rows are compared with the same measurements.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_BENCH_PUSHPULL_TRANSPORTS_H_
#define LOCKSTEP_BENCH_PUSHPULL_TRANSPORTS_H_

#include <string>
#include <vector>

namespace lockstep::bench {

inline const std::vector<std::string>& KnownTransports() {
  static const std::vector<std::string> kKnown = {"tcp", "ipc", "zmq-tcp",
                                                  "zmq-ipc"};
  return kKnown;
}

// True for the ZeroMQ data port ("zmq-tcp", "zmq-ipc").
inline bool IsZmqTransport(const std::string& transport) {
  return transport.rfind("zmq-", 0) == 0;
}

// "tcp" or "ipc": the medium under `transport`.
inline std::string TransportMedium(const std::string& transport) {
  return IsZmqTransport(transport) ? transport.substr(4) : transport;
}

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_TRANSPORTS_H_
