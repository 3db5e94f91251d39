// Peers joining and leaving the job: registration, ranks and Welcomes, the
// workers' descriptions and the job they agree on, the start of training
// (the layout, Start for every worker), late joiners, and removing a
// worker or the evaluator.
//
// Phases: servers and workers register; once every worker has, each gets
// its rank and the job (Welcome) and loads its data; once every server has
// registered and every worker has described itself, the servers get the
// layout (Welcome) and the workers theirs (Start), and training runs. A
// worker registering later (a re-join or a replacement) is welcomed at
// once and starts at the policy's current clock once its description
// matches the job's.
// Thread-safety: not thread-safe; the coordinator's thread owns it.
#ifndef LOCKSTEP_COORDINATOR_ENROLLMENT_ENROLLMENT_H_
#define LOCKSTEP_COORDINATOR_ENROLLMENT_ENROLLMENT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/status.h"
#include "common/wire/placement_messages.h"
#include "coordinator/clock/clock_driver.h"
#include "coordinator/enrollment/shape_agreement.h"
#include "coordinator/enrollment/start_wait.h"
#include "coordinator/replicas/replica_failover.h"
#include "coordinator/rounds/snapshot_rounds.h"
#include "coordinator/state/job_host.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"
#include "coordinator/state/recovery_epoch.h"
#include "coordinator/state/run_recorder.h"
#include "coordinator/state/ticket_desk.h"

namespace lockstep {

class Enrollment {
 public:
  // Every argument must outlive the enrollment; `job` is resolved here
  // when training starts. Welcomes and Starts carry `epoch`; a
  // replicated job's Welcomes say what `failover` placed where.
  Enrollment(JobConfig& job, Outbox& outbox, JobHost& host, Membership& members,
             ClockDriver& clock, SnapshotRounds& rounds, RunRecorder& recorder,
             const RecoveryEpoch& epoch, const ReplicaFailover& failover,
             TicketDesk& tickets)
      : job_(job),
        outbox_(outbox),
        host_(host),
        members_(members),
        clock_(clock),
        rounds_(rounds),
        recorder_(recorder),
        epoch_(epoch),
        failover_(failover),
        shapes_(job.max_params),
        tickets_(tickets) {}

  bool training() const { return training_; }
  // Who has registered and described the job so far (before training).
  StartProgress start_progress() const;
  KeyLayout& layout() { return layout_; }
  // Workers removed so far (dead, refused or replaced).
  uint64_t dead_workers() const { return dead_workers_; }

  // A server or worker registers (not yet known; not a returning server);
  // a worker with the worker credential its key is (-1: the shared key).
  void RegisterPeer(const std::string& id, const wire::Register& reg,
                    int64_t credential = -1);
  // The job's out-of-band evaluator registers like a worker (role
  // Evaluator), describes the same job, and asks Admit for evaluation
  // points (ClockDriver).
  void RegisterEvaluator(const std::string& id, const wire::Register& reg);
  // Records a worker's description; starts training once all have one.
  void HandleDescribe(const std::string& id, Peer& peer,
                      const wire::Describe& describe);
  // A worker that cannot join says why. Before training a bad model or
  // missing data ends the job, which no worker could run; a device its
  // machine lacks (DeviceUnavailable) leaves only that worker out - the
  // job starts with the others (the evaluator's: without evaluations
  // until one joins), and ends if none is left. During training the job
  // goes on without it.
  void HandleWorkerError(const std::string& id, Peer& peer,
                         wire::ErrorCode code, const std::string& message);
  // Removes a dead (or refused) worker; the policy re-evaluates without it.
  // With no worker left the job ends, unless it is being `replaced`.
  void RemoveWorker(const std::string& id, const std::string& why,
                    bool replaced = false);
  void RemoveEvaluator(const std::string& id, const std::string& why);

  // Sends `peer` its Welcome: its rank and the job (servers: the layout
  // and the round to restore, if any); liveness counts from now.
  void SendWelcome(const std::string& id, Peer& peer);
  // Sends `peer` its Start: the job, the layout, the epoch and the clock.
  void SendStart(const std::string& id, Peer& peer);

 private:
  // Whether the evaluator the job needs has described itself (always true
  // for a job without one).
  bool EvaluatorReady() const;
  // A new process `id` registering as `what` (a rank, a credential) while
  // the worker `old` holds it: when the old one's connection closed (a
  // supervisor restarts a worker faster than it is declared dead) it is
  // removed and true returned. A Register never displaces a live member:
  // while the old one is connected `id` is refused (false). True without
  // `old`.
  bool ReplaceWorker(const std::string& id,
                     const std::optional<std::string>& old,
                     const std::string& what);
  // Tells peer `id` why it is not taken (an Error, BadRequest).
  void Refuse(const std::string& id, const std::string& why);
  // Once every worker registered: ranks and Welcomes for all of them.
  void WelcomeWorkersIfReady();
  // Once every server registered and every worker described itself:
  // resolves the job, builds the layout, welcomes the servers, starts the
  // workers. Errors end the job.
  void StartTrainingIfReady();
  // After a worker was left out for its device: the start goes on without
  // it, or the job ends when no worker is left.
  void StartWithoutTheExcused();
  Status StartTraining();
  // A worker whose description matches, welcomed after the others started:
  // joins the policy at its current clock and gets its Start.
  void JoinRunningJob(const std::string& id, Peer& peer);

  JobConfig& job_;
  Outbox& outbox_;
  JobHost& host_;
  Membership& members_;
  ClockDriver& clock_;
  SnapshotRounds& rounds_;
  RunRecorder& recorder_;
  const RecoveryEpoch& epoch_;
  const ReplicaFailover& failover_;
  KeyLayout layout_;
  ShapeAgreement shapes_;
  bool training_ = false;
  // Left out before training for a device their machine lacks.
  StartExcusals excused_;
  int64_t adopt_clock_ = -1;  // ResumePoint::adopt_clock
  uint64_t dead_workers_ = 0;
  TicketDesk& tickets_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_ENROLLMENT_ENROLLMENT_H_
