// The coordinator: registration, the key layout, the clock table, the sync
// policy's admission and commit decisions, liveness and shutdown. It never
// touches tensor payloads, and it knows no model or data set: its workers
// describe both (Describe) once welcomed, and it builds the layout and
// resolves the job's clock count from what they agree on.
//
// Phases: servers and workers register; once every worker has, each gets
// its rank and the job (Welcome) and loads its data; once every server has
// registered and every worker has described itself, the servers get the
// layout (Welcome) and the workers theirs (Start), and training runs. A
// worker registering later (a re-join or a replacement) is welcomed at
// once and starts at the policy's current clock once its description
// matches the job's.
// Thread-safety: Run() owns the socket and all state; call it from one
// thread only.
#ifndef LOCKSTEP_COORDINATOR_COORDINATOR_H_
#define LOCKSTEP_COORDINATOR_COORDINATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/clock.h"
#include "common/job_config.h"
#include "common/layout.h"
#include "common/lr_schedule.h"
#include "common/status.h"
#include "common/wire/message.h"
#include "coordinator/commit_ledger.h"
#include "coordinator/evaluation_schedule.h"
#include "coordinator/metrics_http.h"
#include "coordinator/round_tracker.h"
#include "coordinator/run_recorder.h"
#include "coordinator/sample_budget.h"
#include "coordinator/shape_agreement.h"
#include "coordinator/snapshot_manifest.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

// A worker's Register or Describe capabilities ("max_batch=N").
using CapabilityList =
    flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>;
// Tightens `caps` with `list`: a max_batch below the current cap (or the
// first one) replaces it; unknown entries are ignored.
void TightenWorkerCaps(const CapabilityList* list, WorkerCaps* caps);

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
  // Continue the job from a snapshot round under job.snapshot_dir: round
  // `resume_round`, or the newest complete one when 0.
  bool resume = false;
  uint64_t resume_round = 0;
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
    // Sent its Welcome: a server serves from then on (before, it is silent
    // and exempt from liveness); a worker loads its data and describes.
    bool welcomed = false;
    // Workers: sent Start and joined the policy.
    bool started = false;
    int64_t clock = -1;                    // workers: clock last admitted to
    std::optional<int64_t> pending_admit;  // workers: deferred Admit clock
    bool finished = false;                 // workers: told the job is over
    // Servers: welcomed with a round to restore and silent since.
    bool restoring = false;
  };
  explicit Coordinator(CoordinatorOptions options);

  void HandleMessage(Message& msg);
  // Dispatches a verified message from a registered peer.
  void HandlePeerMessage(const std::string& id, Peer& peer,
                         const wire::Envelope& env);
  void HandleRegister(const std::string& id, const wire::Register& reg);
  // Records a worker's description; starts training once all have one.
  void HandleDescribe(const std::string& id, Peer& peer,
                      const wire::Describe& describe);
  // A worker that cannot join (bad model, missing data) says why; before
  // training that ends the job, which no worker could run.
  void HandleWorkerError(const std::string& id, Peer& peer,
                         const std::string& message);
  void HandleAdmit(const std::string& id, Peer& peer, int64_t clock);
  void HandleClockDone(Peer& peer, const wire::ClockDone& done);
  void HandleCommitted(const wire::Committed& committed);
  void HandleEvaluation(const std::string& id, const wire::Evaluation& eval);
  // Once every worker registered: ranks and Welcomes for all of them.
  void WelcomeWorkersIfReady();
  // Once every server registered and every worker described itself:
  // resolves the job, builds the layout, welcomes the servers, starts the
  // workers. Errors end the job.
  void StartTrainingIfReady();
  Status StartTraining();
  // A worker whose description matches, welcomed after the others started:
  // joins the policy at its current clock and gets its Start.
  void JoinRunningJob(const std::string& id, Peer& peer);
  // Orders `ids` by rank, numbering them (see rank_assignment.h).
  void AssignRanks(std::vector<std::string>& ids);
  // The ranks of the live workers.
  std::vector<uint32_t> WorkerRanks() const;
  void IssueCommits(const std::vector<CommitDecision>& commits);
  void AnswerPendingAdmissions();
  // Admits `peer` to `decision`, or tells it the job is over when `done`
  // or the decision is past the job's end.
  void SendAdmission(const std::string& id, Peer& peer,
                     const AdmissionDecision& decision, bool done = false);
  // Tells a worker asking for `clock` that the job is over.
  void SendFinished(const std::string& id, Peer& peer, int64_t clock);
  bool OnArrival() const;
  // Nothing is left to admit: an apply-on-arrival job's sample budget is
  // spent (sample_budget.h), or every clock of a barrier job is under way
  // or done (a worker joining now has no slice of the last: BatchPlan).
  // Also once the job's time budget is spent (OutOfTime).
  bool Ended() const;
  // budget_s > 0 and training (evaluations left out) ran that long.
  bool OutOfTime() const;
  // Apply-on-arrival jobs: the samples processed, in whole clocks of X.
  int64_t ProgressClocks() const;
  // The clock a pull of the final model names (under BSP the servers
  // answer once the clock before it is applied).
  int64_t FinalModelClock() const;
  // Once every live worker finished: training is over, and the evaluator
  // (or, without one, the lowest-ranked worker; again if the one asked
  // died) is asked for the final evaluation.
  void MaybeRequestFinalEvaluation();
  // The job's out-of-band evaluator (coordinator_clocks.cc). It registers
  // like a worker (role Evaluator), describes the same job, and asks
  // Admit for evaluation points, which come from evaluations_.
  void RegisterEvaluator(const std::string& id, const wire::Register& reg);
  // Whether the evaluator the job needs has described itself (always true
  // for a job without one).
  bool EvaluatorReady() const;
  // Global progress reached `progress` whole clocks: evaluation points up
  // to it are due now.
  void ProgressReached(int64_t progress);
  // Answers the evaluator's pending Admit: the next due point, or the
  // final evaluation once training is over and no point is left.
  void AnswerEvaluator();
  void RemoveEvaluator(const std::string& id, const std::string& why);
  // Snapshot rounds (coordinator_snapshots.cc). Opens or, on resume,
  // loads the manifest and picks the round to restore.
  Status SetUpSnapshots();
  // The (new) policy continues after `round`: resumes at its clock + 1
  // with the policy state the round holds, when it was taken under the
  // same policy.
  void ResumePolicy(const ManifestRound& round);
  // After the commit of `clock`: starts a round when one is due (or
  // `force`d), right behind the commit on every server's queue.
  void MaybeStartRound(int64_t clock, bool force);
  // Starts round after `clock` (the state after its commit) on every
  // server; tools waiting for a round wait for this one.
  void StartRound(int64_t clock);
  void HandleSnapshotDone(const wire::SnapshotDone& done);
  // A tool (lockstep-snapshot now) asks for a round now: it starts at the
  // last committed clock (or after the round in flight), and the tool is
  // answered with a SnapshotDone for the whole round once it finished.
  void HandleRoundRequest(const std::string& id);
  void AnswerRoundRequests(const ManifestRound& round);
  // A server could not restore `round`: the round is marked failed in the
  // manifest (a resume then takes the one before it). At start-up the job
  // ends; in a live recovery every shard rolls back to the round before
  // (the server that failed exits; a supervisor brings it back).
  void HandleRestoreFailed(int shard, uint64_t round, const std::string& why);
  // Records a finished round in the manifest and prunes it.
  void FinishRound(ManifestRound round);
  // Whether the job may end: no round in flight, or it waited long enough.
  bool RoundsSettled();
  // Recovery from a lost server (coordinator_recovery.cc): every shard
  // rolls back to the latest complete round. LoseServer starts it (or ends
  // the job when no round can be restored).
  void LoseServer(const std::string& id, const std::string& why);
  // A server registering while the job trains takes a lost (or replaced)
  // shard's rank. False when there is no shard for it.
  bool AcceptReturningServer(const std::string& id, const wire::Register& reg);
  // A new recovery epoch: every live server is welcomed with `round`.
  void BeginRollback(const ManifestRound& round, const std::string& why);
  void HandleRestored(const Peer& peer, const wire::Restored& restored);
  // Every shard restored: the policy restarts at the round's clock + 1 and
  // every worker gets its Start.
  void FinishRecovery();
  Status CheckRecoveryDeadline() const;
  // Whether a worker's message of recovery epoch `epoch` counts now.
  bool CurrentEpoch(const Peer& peer, uint32_t epoch) const;
  void SendWelcome(const std::string& id, Peer& peer);
  void SendStart(const std::string& id, Peer& peer);
  void SendShutdown(const std::string& reason);
  void Reply(const std::string& id, zmq::message_t header);
  // A copy of `header` to every server, in rank order.
  void SendToServers(zmq::message_t& header);
  void ReplyHeartbeat(const std::string& id);
  void RejectBadMessage(const std::string& id, const Status& why);
  Status CheckLiveness();
  // A new process registering for worker rank `rank` (>= 0) while one is
  // registered: the old one is gone (a supervisor restarts a worker faster
  // than it is declared dead), so it is removed.
  void ReplaceWorkerOfRank(int rank);
  // Removes a dead (or refused) worker; the policy re-evaluates without it.
  // With no worker left the job ends, unless it is being `replaced`.
  void RemoveWorker(const std::string& id, const std::string& why,
                    bool replaced = false);
  // Lowest live worker rank, or -1: the final evaluation's fallback.
  int LowestWorker() const;
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
  bool workers_welcomed_ = false;
  bool training_ = false;
  bool recorder_started_ = false;
  bool final_eval_received_ = false;
  // The peer asked for the final evaluation ("" until then, or if it died).
  std::string final_evaluator_;
  // Every live worker finished its last clock (MaybeRequestFinalEvaluation).
  bool training_over_ = false;
  ShapeAgreement shapes_;
  CommitLedger ledger_;
  SampleBudget budget_;
  // The out-of-band evaluator's routing id ("" when none is registered),
  // and the evaluation points due (evaluation_schedule.h).
  std::string evaluator_id_;
  EvaluationSchedule evaluations_;
  // Apply-on-arrival: samples of pushes every shard applied (reports
  // without a drop), the progress the shards' evaluation images follow.
  uint64_t applied_samples_ = 0;
  uint64_t bad_messages_ = 0;
  int64_t bad_log_budget_ = 20;
  uint64_t dead_workers_ = 0;
  double policy_seconds_ = 0;
  Status abort_status_;

  SnapshotManifest manifest_;
  RoundTracker rounds_;
  std::optional<ManifestRound> restore_;  // the round a resumed job starts at
  // The job's last commit came while a round was in flight: its round
  // starts when that one finishes (nothing changes the state after it).
  std::optional<int64_t> final_round_clock_;
  std::vector<std::string> round_requests_;  // tools waiting for a start
  std::map<uint64_t, std::vector<std::string>> round_waiters_;  // by round
  uint64_t rounds_complete_ = 0;
  uint64_t rounds_failed_ = 0;
  double settle_deadline_s_ = 0;  // when the job stops waiting for a round

  // Recovery: the epoch every message of the job's current timeline
  // carries; the shards that restored the round of this epoch.
  uint32_t epoch_ = 0;
  bool recovering_ = false;
  double recovery_started_s_ = 0;
  // Set when a recovery finishes, until the first commit after it (logged
  // with the time since the loss was noticed, for bench/recovery).
  bool first_commit_pending_ = false;
  // Logs the first commit (apply-on-arrival: the first clock applied) after
  // a recovery, once.
  void LogFirstCommitAfterRecovery(int64_t clock);
  std::set<int> restored_;
  uint64_t recoveries_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_COORDINATOR_H_
