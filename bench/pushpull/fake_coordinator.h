// FakeCoordinator: plays the coordinator for a set of real lockstep-server
// processes, so the data plane can be driven without a full job. It binds
// the coordinator ROUTER, spawns S servers, takes their Register, answers
// with a Welcome (apply on arrival, SGD, one dense tensor "values"), answers
// their heartbeats while the benchmark runs, and shuts them down at the end.
// Thread-safety: not thread-safe; one thread (it owns the ROUTER socket and
// the child processes). Create it before starting client threads: spawning
// forks this process.
#ifndef LOCKSTEP_BENCH_PUSHPULL_FAKE_COORDINATOR_H_
#define LOCKSTEP_BENCH_PUSHPULL_FAKE_COORDINATOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/security/peer_ticket.h"
#include "common/status.h"
#include "tools/launch/process_group.h"

namespace lockstep::bench {

struct ServerSetOptions {
  // Path of the lockstep-server binary.
  std::string server_binary;
  uint32_t servers = 1;
  // The job's worker count: clients use sender ranks [0, workers).
  uint32_t workers = 1;
  // The servers' data port (transports.h): "tcp" (127.0.0.1,
  // kernel-chosen ports) or "ipc" (/tmp sockets) for the direct transport,
  // "zmq-tcp" or "zmq-ipc" for ZeroMQ.
  std::string transport = "tcp";
  // Floats in the dense tensor "values" (at least 1).
  uint64_t dense_values = 1;
  // sparse_dim 1: shards also own ranges of the 64-bit sparse id space.
  bool sparse = false;
  uint64_t seed = 1;
  // Initial weights are uniform in [-init_scale, init_scale].
  float init_scale = 0.5f;
  // SGD learning rate. 1 keeps a replayed update bit-exact in float.
  double lr = 1.0;
  // The address the coordinator socket binds (the servers connect to it)
  // and the one the servers' tcp data ports listen on: loopback unless the
  // servers run in another network namespace (bench/security_bench.sh).
  std::string coordinator_host = "127.0.0.1";
  std::string server_host = "127.0.0.1";
  // How long servers may take to start and register.
  double start_timeout_s = 20;
};

class FakeCoordinator {
 public:
  // Spawns and welcomes the servers. Fails if one does not start, register
  // or accept the job in time (its output is in the error).
  static StatusOr<std::unique_ptr<FakeCoordinator>> Start(
      const ServerSetOptions& options);
  // Shuts the servers down if Shutdown() was not called.
  ~FakeCoordinator();
  FakeCoordinator(const FakeCoordinator&) = delete;
  FakeCoordinator& operator=(const FakeCoordinator&) = delete;

  // The layout with every shard's data endpoint set.
  const KeyLayout& layout() const { return layout_; }
  const JobConfig& job() const { return job_; }
  // With job keys: a data-plane ticket for each of `workers` ranks, as
  // its Welcome would give it (none without keys).
  std::vector<PeerTicket> Tickets(uint32_t workers);

  // Answers heartbeats and collects the servers' output without waiting.
  // Fails if a server has exited. Call between measurements (servers give
  // up after ten silent heartbeat periods, ten minutes here).
  Status Pump();
  // Sends Shutdown to every server and reaps them (SIGKILL after 5 s).
  // Fails if one exits with an error.
  Status Shutdown();

 private:
  explicit FakeCoordinator(ServerSetOptions options);

  Status Bind();
  std::string CoordinatorListen() const {
    return "tcp://" + options_.coordinator_host + ":0";
  }
  Status Spawn();
  // Waits for every server's Register; records routing ids and endpoints.
  Status AwaitRegistrations();
  Status SendWelcomes();
  Status SendTo(const std::string& peer, zmq::message_t header);
  // Appends the children's recent output to log_ and notes exits.
  void CollectOutput(std::chrono::milliseconds wait);
  std::string RecentOutput() const;

  ServerSetOptions options_;
  JobConfig job_;
  std::optional<TicketMint> tickets_;  // with job keys
  KeyLayout layout_;
  zmq::socket_t router_;
  std::string endpoint_;
  ProcessGroup children_;
  std::vector<std::string> peers_;  // routing id of shard i
  // ipc socket files this set's servers bind (direct or ZeroMQ); removed
  // after shutdown, as ZeroMQ, or a killed server, leaves them behind.
  std::vector<std::string> ipc_files_;
  std::vector<std::string> log_;
  std::vector<std::string> exits_;  // "server 1 exited with status 1"
  bool failed_exit_ = false;
  bool shut_down_ = false;
};

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_FAKE_COORDINATOR_H_
