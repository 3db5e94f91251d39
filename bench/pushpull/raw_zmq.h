// The raw ZeroMQ baseline: a DEALER client for the ROUTER echo server of
// RunRawZmqServer. A request is a 64-byte header frame {request id, reply
// bytes, padding} plus, for the push pattern, a zero-copy payload frame of
// SIZE; the reply is the header frame plus, for the pull pattern, a
// zero-copy payload frame of SIZE. Sockets carry the project's options
// (common/transport/zmq/zmq_socket.h) and the client runs the same
// drain-then-poll loop as the PS clients, so the difference to a PS row is the
// PS logic. Thread-safety: one thread uses a client (it owns its socket).
#ifndef LOCKSTEP_BENCH_PUSHPULL_RAW_ZMQ_H_
#define LOCKSTEP_BENCH_PUSHPULL_RAW_ZMQ_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/status.h"

namespace lockstep::bench {

class RawZmqClient {
 public:
  static StatusOr<std::unique_ptr<RawZmqClient>> Connect(
      const std::string& endpoint);

  // `ops` round trips with up to `outstanding` in flight, pattern "pull" or
  // "push"; appends each latency (us) to `latencies` when set.
  Status RoundTrips(const std::string& pattern, uint64_t bytes,
                    uint32_t outstanding, uint64_t ops,
                    std::vector<double>* latencies);

 private:
  explicit RawZmqClient(zmq::socket_t socket) : socket_(std::move(socket)) {}
  Status Send(uint64_t id, bool pull, uint64_t bytes);
  // Receives what is queued, completing ops and sending the next ones.
  Status Drain(std::vector<double>* latencies, bool* progress);

  zmq::socket_t socket_;
  std::shared_ptr<std::vector<char>> payload_ =
      std::make_shared<std::vector<char>>();
  std::vector<std::pair<uint64_t, int64_t>> in_flight_;  // id, start ns
  uint64_t next_id_ = 1;
  uint64_t sent_ = 0, done_ = 0, target_ = 0;
  bool pull_ = true;
  uint64_t bytes_ = 0;
};

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_RAW_ZMQ_H_
