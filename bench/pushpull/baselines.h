// Baselines measured in the same run as the parameter-server rows, with the
// same sizes, request/reply pattern, outstanding count and timing rules:
//
//  - raw TCP: plain loopback sockets with TCP_NODELAY, no framing beyond a
//    16-byte length header. Round trips in the PS pattern (pull: 64-byte
//    request, reply of SIZE; push: request of SIZE, 64-byte reply), K in
//    flight on one connection; and one-way streaming GB/s of SIZE messages.
//  - raw ZeroMQ: DEALER/ROUTER with the project's socket options, the same
//    pattern as multipart messages (a 16-byte header frame plus a zero-copy
//    payload frame), no FlatBuffers, no PS logic; over tcp and ipc.
//
// Both echo servers run in a child process (this binary, hidden
// subcommands), as lockstep-server does, so the baselines pay the same
// process and scheduling costs on a small machine.
// Thread-safety: MeasureBaselines is called from one thread.
#ifndef LOCKSTEP_BENCH_PUSHPULL_BASELINES_H_
#define LOCKSTEP_BENCH_PUSHPULL_BASELINES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bench/pushpull/ps_load.h"
#include "bench/pushpull/report.h"
#include "common/status.h"

namespace lockstep::bench {

// Requests of a pull and replies of a push: about the size of the PS
// headers (a Pull or PushAck envelope is 60-100 bytes).
inline constexpr uint64_t kSmallMessageBytes = 64;

struct BaselineOptions {
  std::string self_binary;  // this executable, for the echo servers
  std::vector<uint64_t> sizes;
  std::vector<uint32_t> outstanding;
  std::vector<std::string> ops;  // pull, push
  // Media to run raw ZeroMQ over: tcp, ipc (see TransportMedium).
  std::vector<std::string> transports;
  // Warm-up and timed-op rules, as for the PS rows (op, workers and
  // outstanding are ignored).
  LoadOptions plan;
};

// Measures every baseline and adds it to `report`.
Status MeasureBaselines(const BaselineOptions& options, Report* report);

// The echo servers' entry points (`lockstep-bench raw-tcp-server` and
// `lockstep-bench raw-zmq-server ENDPOINT`). Each prints "LISTENING
// <endpoint>" on stdout once ready and serves until SIGTERM. Return the
// process exit code.
int RunRawTcpServer();
int RunRawZmqServer(const std::string& endpoint);

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_BASELINES_H_
