// The coordinator: registration, the key layout, the clock table, the sync
// policy's admission and commit decisions, liveness and shutdown. It never
// touches tensor payloads, and it knows no model or data set: its workers
// describe both (Describe) once welcomed, and it builds the layout and
// resolves the job's clock count from what they agree on.
//
// It is a small loop over components that own their state (all in
// coordinator/): Membership (who takes part), Enrollment (joining, the
// job's start, leaving), ClockDriver (admissions, commits, evaluations),
// SnapshotRounds (rounds and the manifest) and Recovery (a lost server's
// rollback); they send through an Outbox, here the ROUTER socket.
// Thread-safety: Run() owns the socket and all state; call it from one
// thread only.
#ifndef LOCKSTEP_COORDINATOR_COORDINATOR_H_
#define LOCKSTEP_COORDINATOR_COORDINATOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "common/job_config.h"
#include "common/status.h"

namespace lockstep {

struct CoordinatorOptions {
  JobConfig job;
  // Where to bind, e.g. "tcp://0.0.0.0:7400"; port 0 picks a free port.
  std::string listen = "tcp://0.0.0.0:7400";
  // Host name peers use when `listen` is a wildcard address.
  std::string advertise;
  std::string run_dir;
  // Prometheus metrics endpoint "HOST:PORT" (port 0 = any); empty = off.
  std::string metrics_listen = "127.0.0.1:0";
  // A file holding the bearer token /metrics requires (empty: none).
  std::string metrics_token_file;
  // How long to wait for every server and worker to register.
  double register_timeout_s = 300;
  // A peer silent for this many heartbeat intervals is declared dead.
  uint32_t dead_after_heartbeats = 10;
  // Continue the job from a snapshot round under job.snapshot_dir: round
  // `resume_round`, or the newest complete one when 0.
  bool resume = false;
  uint64_t resume_round = 0;
  // Resume when job.snapshot_dir holds a complete round, else start the
  // job (a requeued or restarted job that may or may not have one).
  bool resume_if_present = false;
};

class Coordinator {
 public:
  static StatusOr<std::unique_ptr<Coordinator>> Create(
      CoordinatorOptions options);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // The endpoint peers connect to (real port, advertised host).
  const std::string& endpoint() const;
  // Where /metrics is served, or "" when off.
  std::string metrics_url() const;
  // Runs the job to its end. Returns OK when training finished and every
  // peer was told to shut down; an error when the job had to be aborted.
  Status Run();
  // Whether Run() ended because the engine terminated the job and it can
  // resume from its snapshot rounds (common/termination.h).
  bool preempted() const;
  // Asks Run() to stop soon (async-signal-safe).
  static void RequestStop();

 private:
  // The socket and the components (coordinator.cc).
  class Impl;
  explicit Coordinator(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_COORDINATOR_H_
