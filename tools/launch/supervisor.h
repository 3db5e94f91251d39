// Supervisor: the decisions of `lockstep-launch --supervise`. A failed
// server, worker or evaluator is started again after a backoff; a failed
// coordinator takes the job with it (the model's timeline is the
// coordinator's), so every role is stopped and the job is started again
// from its newest complete snapshot round (--resume).
//
// The backoff: 0.5 s before the first restart of a role, doubling per
// restart of that role up to 10 s; after `max_restarts` the role fails the
// job. A role that had run for kStableRun before it failed counts from zero
// again (it was not in a crash loop: a preempted machine, a killed
// process). Restarts are counted per role label, the coordinator's
// (label "coordinator") standing for the job's.
//
// It starts and stops nothing itself: it answers whether and when, keeps
// the roles waiting for their restart, and the launcher acts on that. Apart
// from reading the snapshot manifest it does no I/O, and it takes the time
// as an argument, so it is tested without processes or sleeps.
//
// Thread-safety: not thread-safe; use from the launcher's thread.
#ifndef LOCKSTEP_TOOLS_LAUNCH_SUPERVISOR_H_
#define LOCKSTEP_TOOLS_LAUNCH_SUPERVISOR_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "tools/launch/role_processes.h"

namespace lockstep {

// Whether the roles a launcher starts wait for a restarted coordinator
// ($LOCKSTEP_REATTACH_S > 0, which --supervise sets): then a failed
// coordinator is restarted alone.
bool RolesReattach();

class Supervisor {
 public:
  using Clock = std::chrono::steady_clock;

  // A role that ran this long before it failed restarts like a first time.
  static constexpr std::chrono::seconds kStableRun{60};

  // What to do about a failed role (or job). `restart`: `message` is the
  // console's line about the restart to come. Otherwise the job fails, and
  // `message` is the reason to report.
  struct Decision {
    bool restart = false;
    std::string message;
  };

  // A role waiting for its restart.
  struct PendingRestart {
    std::string role;
    int rank = 0;
    Clock::time_point at;
  };

  explicit Supervisor(uint32_t max_restarts);

  // The backoff before restart number `restart` (1, 2, ...) of a role, in
  // seconds: 0.5, 1, 2, 4, 8, then 10.
  static double RestartDelayS(uint32_t restart);

  // `role` failed at `now` (`what` says how, "worker 1 (pid N) exited with
  // status 3"). On a restart, the role waits in the pending list until its
  // backoff has passed (TakeDue).
  Decision RestartRole(const RoleProcess& role, const std::string& what,
                       Clock::time_point now);

  // The coordinator `role` failed at `now`. On a restart, `*resume_job` is
  // the job recorded in the manifest of `snapshot_dir` (empty: the job
  // takes no snapshots), to start again with --resume: with
  // `roles_reattach` only the coordinator, at its endpoint (the other
  // roles wait for it, common/coordinator_watch.h); else every role.
  Decision RestartJob(const RoleProcess& role, const std::string& what,
                      const std::string& snapshot_dir, Clock::time_point now,
                      std::optional<JobConfig>* resume_job,
                      bool roles_reattach = false);

  // Removes and returns the pending restarts due at `now`, oldest first.
  std::vector<PendingRestart> TakeDue(Clock::time_point now);
  // The backoff before the job, restarted by RestartJob, starts again.
  std::chrono::milliseconds JobRestartDelay();
  // Forgets the pending restarts: the job restarts every role anyway.
  void ClearPending() { pending_.clear(); }
  size_t pending() const { return pending_.size(); }

 private:
  // Counts a restart of `role`: " in D s (restart N of at most M)", or
  // nullopt (`*failure` says why) when it used up its restarts.
  std::optional<std::string> TakeRestart(const RoleProcess& role,
                                         const std::string& what,
                                         Clock::time_point now,
                                         std::string* failure);

  uint32_t max_restarts_;
  std::vector<PendingRestart> pending_;
  std::map<std::string, uint32_t> restart_counts_;  // by role label
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_SUPERVISOR_H_
