// JobMonitor: watches a running job through what its roles print and how
// they exit, and reports how the job ended. It copies each role line into
// the role's log, reads the coordinator's tagged lines (@endpoint,
// @progress, @summary), judges each exit (JudgeExit, the rules of
// launcher.h), asks the Supervisor under --supervise, and keeps the first
// failure as the job's cause. The Launcher polls the processes, hands the
// events here, and asks State() whether the job must stop.
//
// Thread-safety: not thread-safe; use from the launcher's thread.
#ifndef LOCKSTEP_TOOLS_LAUNCH_JOB_MONITOR_H_
#define LOCKSTEP_TOOLS_LAUNCH_JOB_MONITOR_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/job_config.h"
#include "tools/launch/console.h"
#include "tools/launch/launch_options.h"
#include "tools/launch/process_group.h"
#include "tools/launch/role_processes.h"
#include "tools/launch/supervisor.h"

namespace lockstep {

// How the job stands. kRestart: the coordinator failed under --supervise;
// the job starts again from its newest complete snapshot round.
enum class JobOutcome { kRunning, kFailed, kTimedOut, kInterrupted, kRestart };

// What a role's exit means for the job.
enum class ExitVerdict {
  kIgnored,            // expected: during teardown, or after the job ended
  kFailedAfterTheEnd,  // a warning: the job's result stands
  kJobDone,            // the coordinator exited 0
  kRestartJob,         // --supervise: the coordinator failed
  kRestartRole,        // --supervise: a server, worker or evaluator failed
  kWorkerLost,         // the job goes on with the other workers
  kEvaluatorLost,      // training goes on without evaluations
  kJobFails,           // every role is stopped
  kLeftEarly,          // exited 0 before the coordinator: the coordinator's
                       // to judge
};

// What an exit is judged against.
struct ExitRules {
  bool judging = true;  // false during teardown, where exits are expected
  bool coordinator_done = false;
  bool supervise = false;
  bool stop_on_worker_failure = false;
};

// The verdict on the exit `exit` of a process of `role` ("coordinator",
// "server", "worker", "evaluator"); `is_coordinator`: it is the job's
// current coordinator. A role that exits kExitJobAborted was told the job
// failed: the coordinator's exit is the one to judge; a worker that exits
// kExitDeviceUnavailable is lost, not restarted (it would fail again).
ExitVerdict JudgeExit(const std::string& role, bool is_coordinator,
                      const ExitInfo& exit, const ExitRules& rules);

class JobMonitor {
 public:
  // None owned; all must outlive the monitor. `options` is read as it is
  // at each call (a resumed job changes it).
  JobMonitor(const LaunchOptions& options, Console* console,
             RoleProcesses* roles, Supervisor* supervisor);

  // Starts the job's clock (progress times and --timeout-s count from it).
  void StartClock() { start_ = std::chrono::steady_clock::now(); }
  double ElapsedS() const;

  // Handles the lines (before the exits) of roles this launcher started.
  void Handle(const ChildEvents& events);
  // Off while every role is being stopped: those exits are expected.
  void set_judging_exits(bool judging) { judging_exits_ = judging; }
  // Records why the job failed, and the role to blame (null: none). The
  // first failure is the cause; later ones are ignored.
  void Fail(const std::string& reason, const RoleProcess* role);

  // kRunning unless the job must stop (or restart) now.
  JobOutcome State() const;

  // The coordinator's endpoint, empty until it printed one.
  const std::string& endpoint() const { return endpoint_; }
  // Forgets the endpoint of a coordinator that is gone.
  void ClearEndpoint() { endpoint_.clear(); }
  bool coordinator_done() const { return coordinator_done_; }
  // The job to resume, set once State() is kRestart; clears it.
  JobConfig TakeResumeJob();

  // Why the job stops (`outcome` is not kRunning), before it is stopped.
  void ReportStopping(JobOutcome outcome, size_t processes);
  // After everything stopped: the failed role's last lines, the run dir.
  void ReportStopped(const std::string& run_dir);
  // A job that ended well: failed workers, the summary, the run dir.
  void ReportDone(const std::string& run_dir);
  // The launcher's exit code for a job that stopped with `outcome`.
  static int ExitCode(JobOutcome outcome);

 private:
  void HandleLine(RoleProcess& role, const ChildLine& line);
  void HandleExit(RoleProcess& role, const ChildExit& exit);
  // Acts on the Supervisor's answer about `role`.
  void Apply(const Supervisor::Decision& decision, const RoleProcess& role);
  // A worker failed while the job runs and --stop-on-worker-failure is off.
  void WorkerFailed(const RoleProcess& role, const std::string& what);
  // Removes the cgroup a worker with a cpu= profile made for itself.
  void RemoveWorkerCpuQuotaGroup(const RoleProcess& role, pid_t pid) const;

  const LaunchOptions& options_;
  Console* console_;
  RoleProcesses* roles_;
  Supervisor* supervisor_;
  std::chrono::steady_clock::time_point start_ =
      std::chrono::steady_clock::now();
  std::string metrics_url_;  // the coordinator's @metrics line
  std::string endpoint_;
  std::string summary_json_;
  bool coordinator_done_ = false;
  // Exits are judged only while the job runs; during teardown they are
  // expected.
  bool judging_exits_ = true;
  std::string failure_;          // why the job failed; empty if it did not
  uint32_t workers_failed_ = 0;  // before the coordinator was done
  std::optional<JobConfig> resume_job_;       // set: restart the job with it
  const RoleProcess* failed_role_ = nullptr;  // the role to blame, if any
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_JOB_MONITOR_H_
