// The raw TCP baseline: a client for the echo server of RunRawTcpServer.
// Wire format: a request is a 16-byte header {payload bytes, reply bytes}
// (host order; loopback only) followed by the payload; the server reads it
// whole and writes back `reply bytes` bytes. One connection, TCP_NODELAY.
// Thread-safety: one thread uses a client at a time (RoundTrips starts a
// sender thread of its own and joins it before returning).
#ifndef LOCKSTEP_BENCH_PUSHPULL_RAW_TCP_H_
#define LOCKSTEP_BENCH_PUSHPULL_RAW_TCP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::bench {

class RawTcpClient {
 public:
  static StatusOr<std::unique_ptr<RawTcpClient>> Connect(uint16_t port);
  ~RawTcpClient();
  RawTcpClient(const RawTcpClient&) = delete;
  RawTcpClient& operator=(const RawTcpClient&) = delete;

  // `ops` round trips with up to `outstanding` requests in flight; pattern
  // "pull" sends small requests for replies of `bytes`, "push" the reverse.
  // Appends each latency (us) to `latencies` when set. Replies arrive in
  // order, so the i-th reply answers the i-th request.
  Status RoundTrips(const std::string& pattern, uint64_t bytes,
                    uint32_t outstanding, uint64_t ops,
                    std::vector<double>* latencies);
  // Sends `messages` messages of `bytes` back to back, one way, and waits
  // for the server to have read them all. Returns the elapsed seconds.
  StatusOr<double> Stream(uint64_t bytes, uint64_t messages);

 private:
  explicit RawTcpClient(int fd) : fd_(fd) {}
  // Writes the header and `payload` bytes of the send buffer.
  bool SendRequest(uint64_t payload, uint64_t reply);

  int fd_;
  std::vector<char> send_buffer_;
  std::vector<char> receive_buffer_;
};

// The port a "LISTENING tcp://127.0.0.1:PORT" line names, or 0.
uint16_t PortOfEndpoint(const std::string& endpoint);

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_RAW_TCP_H_
