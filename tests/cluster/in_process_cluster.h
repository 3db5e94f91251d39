// Test support: a whole job — coordinator, server shards, workers — as
// threads of the test process (gloo's style), talking over a real control
// socket on 127.0.0.1 and the data transport a test picks (the in-process
// backend, or stream and ZeroMQ sockets on this machine). A job of a few
// dozen clocks runs in well under a second, so tests can sweep transports,
// optimizers and policies.
// Thread-safety: RunInProcess is not reentrant (the roles' stop flags are
// process-wide); one job at a time.
#ifndef LOCKSTEP_TESTS_CLUSTER_IN_PROCESS_CLUSTER_H_
#define LOCKSTEP_TESTS_CLUSTER_IN_PROCESS_CLUSTER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"

namespace lockstep {

struct InProcessJob {
  JobConfig job;
  // Each shard's --listen; "@RANK" and "@PID" are replaced. The default is
  // the in-process backend.
  std::string data_listen = "inproc://shard-@RANK:0";
  // The process running the final evaluation (the evaluator thread, or
  // worker 0 when job.evaluators is 0) writes the final dense model here
  // (optional).
  std::string dump_model;
  std::string run_dir;
  // Each worker's --hetero profile, by rank (missing ranks: none).
  std::vector<std::string> hetero;
  // Continue from round `resume_round` (0: the newest complete one) under
  // job.snapshot_dir.
  bool resume = false;
  uint64_t resume_round = 0;
  // Everything is stopped (and the run fails) after this long.
  std::chrono::seconds timeout{60};
};

struct InProcessResult {
  Status coordinator;
  std::vector<Status> servers;
  std::vector<Status> workers;
  Status evaluator;  // OK too when the job has none
  // True when every role returned OK.
  bool ok() const;
  // One line per role that failed.
  std::string Failures() const;
};

// Runs `job` to its end and returns what each role's Run() returned.
InProcessResult RunInProcess(const InProcessJob& job);

// clock -> worker -> batch, from a run's metrics.jsonl at `path`.
std::map<int64_t, std::map<uint32_t, uint32_t>> BatchSplits(
    const std::string& path);

// The data transports a shard can listen on, as InProcessJob::data_listen
// values: inproc, ipc, tcp and zmq+tcp.
std::vector<std::string> AllDataTransports();

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_CLUSTER_IN_PROCESS_CLUSTER_H_
