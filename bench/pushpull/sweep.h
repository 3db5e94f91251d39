// `lockstep-bench pushpull`: the data-plane sweep. For every value size,
// dense/sparse mode, transport and server count it starts a fresh set of
// real lockstep-server processes (FakeCoordinator), then measures pull and
// push rows for every worker count and outstanding depth (RunLoad), after
// the raw TCP and raw ZeroMQ baselines (MeasureBaselines). Pull rows run
// first, against the initial weights; after each push row one verifying
// pull compares every value with the exactly replayed SGD result.
// Thread-safety: RunPushPull is called once, from main.
#ifndef LOCKSTEP_BENCH_PUSHPULL_SWEEP_H_
#define LOCKSTEP_BENCH_PUSHPULL_SWEEP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::bench {

struct SweepOptions {
  // Value bytes per operation: 4 KiB .. 64 MiB in powers of 4.
  std::vector<uint64_t> sizes;
  std::vector<uint32_t> servers = {1, 2};
  std::vector<uint32_t> workers = {1, 2};
  std::vector<uint32_t> outstanding = {1, 8};
  // Data ports to measure (see transports.h): the direct transport over
  // tcp and ipc, and the ZeroMQ one over tcp for comparison.
  std::vector<std::string> transports = {"tcp", "ipc", "zmq-tcp"};
  std::vector<std::string> modes = {"dense", "sparse"};
  std::vector<std::string> ops = {"pull", "push"};
  // Sparse rows stop here by default: the servers apply a sparse push at
  // ~0.3-1 us per id (hash-map accumulation), so a 1 MiB sparse push row
  // takes seconds and a 4 MiB one minutes; pass --sparse-max to go on.
  uint64_t sparse_max_bytes = 256u << 10;
  // Timed ops per worker; 0 = as many as fit in row_seconds.
  uint64_t iters = 0;
  double row_seconds = 0.3;
  uint64_t max_ops = 20000;
  bool baselines = true;
  bool json = false;
  uint64_t seed = 1;
  std::string server_binary;  // default: the build tree's lockstep-server
  // Addresses of the coordinator socket and the servers' tcp data ports.
  std::string coordinator_host = "127.0.0.1";
  std::string server_host = "127.0.0.1";
  std::string self_binary;  // this executable (for the echo servers)
};

// Parses `pushpull` flags (argv[0] is the subcommand). --smoke selects a
// short sweep (< 30 s on 2 cores); other flags still override it.
StatusOr<SweepOptions> ParseSweepFlags(int argc, char** argv);

// Runs the sweep and prints the report. Returns the process exit code: 0,
// or 1 if a row had wrong values or errors, 2 for bad flags.
int RunPushPull(int argc, char** argv);

// Parses "4K,64K,1M" or a geometric range "4K:64M" (factor 4) or
// "4K:64M:2".
StatusOr<std::vector<uint64_t>> ParseSizes(const std::string& text);

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_SWEEP_H_
