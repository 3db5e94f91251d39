// The coordinator: registration, the key layout, the clock table, the sync
// policy's admission and commit decisions, liveness and shutdown. It never
// touches tensor payloads.
// Thread-safety: Run() owns the socket and all state; call it from one
// thread only.
#ifndef LOCKSTEP_SERVER_COORDINATOR_COORDINATOR_H_
#define LOCKSTEP_SERVER_COORDINATOR_COORDINATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/clock.h"
#include "common/job_config.h"
#include "common/layout.h"
#include "common/lr_schedule.h"
#include "common/message.h"
#include "common/status.h"
#include "server/coordinator/metrics_http.h"
#include "server/coordinator/run_recorder.h"
#include "sync_policies/sync_policy.h"

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
  // How long to wait for every server and worker to register.
  double register_timeout_s = 300;
  // A peer silent for this many heartbeat intervals is declared dead.
  uint32_t dead_after_heartbeats = 10;
};

class Coordinator {
 public:
  static StatusOr<std::unique_ptr<Coordinator>> Create(
      CoordinatorOptions options);
  ~Coordinator();

  // The endpoint peers connect to (real port, advertised host).
  const std::string& endpoint() const { return endpoint_; }
  // Where /metrics is served, or "" when off.
  std::string metrics_url() const {
    return metrics_ ? metrics_->url() : std::string();
  }
  // Runs the job to its end. Returns OK when training finished and every
  // peer was told to shut down; an error when the job had to be aborted.
  Status Run();
  // Asks Run() to stop soon (async-signal-safe).
  static void RequestStop();

 private:
  struct Peer {
    wire::Role role = wire::Role::Tool;
    int rank = -1;
    int rank_hint = -1;
    std::string endpoint;  // servers: data endpoint
    std::string host;
    WorkerCaps caps;
    int64_t last_seen_ms = 0;
    int64_t clock = -1;                    // workers: clock last admitted to
    std::optional<int64_t> pending_admit;  // workers: deferred Admit clock
    bool finished = false;                 // workers: told the job is over
  };
  // A worker's report for a clock, until its clock is committed.
  struct PendingReport {
    uint32_t batch = 0;
    double loss = 0;
  };

  Coordinator(CoordinatorOptions options, KeyLayout layout,
              LrSchedule schedule);

  void HandleMessage(Message& msg);
  void HandleRegister(const std::string& id, const wire::Register& reg);
  void HandleAdmit(const std::string& id, Peer& peer, int64_t clock);
  void HandleClockDone(Peer& peer, const wire::ClockDone& done);
  void HandleCommitted(const wire::Committed& committed);
  void HandleEvaluation(const Peer& peer, const wire::Evaluation& eval);
  void StartTrainingIfReady();
  // A worker registering after training started (re-join or replacement)
  // takes a free rank and starts at the policy's current clock.
  void JoinRunningJob(const std::string& id, Peer& peer);
  // Gives every peer in `ids` a rank: its hint when valid and unclaimed,
  // else the lowest free rank, in registration order.
  void AssignRanks(std::vector<std::string>& ids);
  void IssueCommits(const std::vector<CommitDecision>& commits);
  void AnswerPendingAdmissions();
  void SendAdmission(const std::string& id, Peer& peer,
                     const AdmissionDecision& decision);
  // Once every live worker finished, asks the lowest-ranked one for the
  // final evaluation (again, if the one asked died).
  void MaybeRequestFinalEvaluation();
  void SendWelcome(const std::string& id, const Peer& peer);
  void SendShutdown(const std::string& reason);
  void Reply(const std::string& id, zmq::message_t header);
  void ReplyHeartbeat(const std::string& id);
  void RejectBadMessage(const std::string& id, const Status& why);
  Status CheckLiveness();
  // Removes a dead worker; the policy re-evaluates without it.
  void RemoveWorker(const std::string& id, const std::string& why);
  // Lowest live worker rank, or -1.
  int Evaluator() const;
  bool TrainingDone() const;
  // Publishes a metrics snapshot (at most every 0.5 s unless forced).
  void PublishMetrics(bool force);
  // Runs a policy call and adds its duration to the decision time.
  template <typename Call>
  auto Timed(Call call) -> decltype(call()) {
    const double start = NowSeconds();
    auto result = call();
    policy_seconds_ += NowSeconds() - start;
    return result;
  }

  CoordinatorOptions options_;
  KeyLayout layout_;
  LrSchedule schedule_;
  std::unique_ptr<SyncPolicy> policy_;
  std::unique_ptr<RunRecorder> recorder_;
  std::unique_ptr<MetricsHttpServer> metrics_;
  double metrics_published_s_ = 0;
  zmq::socket_t socket_;
  std::string endpoint_;

  std::map<std::string, Peer> peers_;  // by routing id
  std::vector<std::string> server_ids_;
  std::vector<std::string> worker_ids_;  // live workers
  bool training_ = false;
  bool recorder_started_ = false;
  bool final_eval_received_ = false;
  int final_evaluator_ = -1;  // rank asked for the final evaluation
  // Clock -> shards that applied it.
  std::map<int64_t, uint32_t> committed_acks_;
  int64_t fully_applied_ = -1;
  // Clock -> worker -> report, until the clock is committed (OnCommit).
  std::map<int64_t, std::map<uint32_t, PendingReport>> reports_;
  uint64_t bad_messages_ = 0;
  int64_t bad_log_budget_ = 20;
  uint64_t dead_workers_ = 0;
  double policy_seconds_ = 0;
  Status abort_status_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_COORDINATOR_COORDINATOR_H_
