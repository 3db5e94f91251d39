// Launcher: runs one job on this machine. It writes the run directory's
// config.json, starts the coordinator and waits for its `@endpoint` line,
// starts the servers and then the workers, copies every role line into
// <run dir>/logs, shows progress, and decides how the job ended:
//
//   - the coordinator exits 0: the job is done. The others get up to
//     kShutdownWait to exit by themselves (they are sent a Shutdown), then
//     are stopped. Exit code 0.
//   - the coordinator or a server exits non-zero or by a signal before
//     that (or the coordinator prints no endpoint in time): every other
//     role is stopped (SIGTERM, kTerminateGrace, SIGKILL), the failed role
//     and its last lines are reported. Exit code 1.
//   - a worker exits non-zero or by a signal before that: it is reported
//     ("...; the job goes on with the other workers") and the job goes on,
//     since the coordinator drops dead workers and training continues.
//     With --stop-on-worker-failure, or once every worker has failed, it is
//     handled like a failing server instead.
//   - with --supervise, a server or worker that fails is started again
//     (same flags, its log appended) after 0.5 s, doubling per restart of
//     that role up to 10 s; after --max-restarts it fails as above. A
//     coordinator that fails takes the job's timeline with it: every role
//     is stopped and the whole job started again with --resume from its
//     newest complete snapshot round (launcher_supervise.cc).
//   - --timeout-s passes first: everything is stopped. Exit code 124.
//   - SIGINT/SIGTERM reaches the launcher: everything is stopped. Exit 130.
//
// Thread-safety: not thread-safe. Run() installs process-wide SIGINT and
// SIGTERM handlers, so run at most one Launcher per process.
#ifndef LOCKSTEP_TOOLS_LAUNCH_LAUNCHER_H_
#define LOCKSTEP_TOOLS_LAUNCH_LAUNCHER_H_

#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "tools/launch/console.h"
#include "tools/launch/launch_options.h"
#include "tools/launch/net_lab.h"
#include "tools/launch/process_group.h"

namespace lockstep {

class Launcher {
 public:
  static constexpr std::chrono::seconds kEndpointWait{30};
  static constexpr std::chrono::seconds kShutdownWait{10};
  static constexpr std::chrono::seconds kTerminateGrace{3};
  // Lines of each role kept to show when it fails.
  static constexpr size_t kTailLines = 20;

  // `console` is not owned and must outlive the launcher.
  Launcher(LaunchOptions options, RoleBinaries binaries, Console* console);
  ~Launcher();

  // Runs the job to its end and returns the launcher's exit code (above).
  int Run();

 private:
  // kRestart: the coordinator failed under --supervise; the job starts
  // again from its newest complete snapshot round.
  enum class Outcome { kRunning, kFailed, kTimedOut, kInterrupted, kRestart };

  struct Role {
    std::string role;  // "coordinator", "server", "worker", "evaluator"
    int rank = 0;
    std::string label;  // "coordinator", "server 1", "worker 2"
    std::string log_path;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> log{nullptr, &std::fclose};
    std::deque<std::string> tail;
    std::chrono::steady_clock::time_point started =
        std::chrono::steady_clock::now();
  };

  Status PrepareRunDir();
  // --links real: the namespaces every role runs in; binds their address.
  Status BuildNetLab();
  Status StartRole(const std::string& role, int rank,
                   const std::vector<std::string>& argv);
  // The command line of server or worker `rank`.
  // The command line of a server, worker or evaluator (`role`).
  std::vector<std::string> PeerArgv(const std::string& role, int rank);
  // --supervise: schedules the restart of a failed role; false when it
  // used up its restarts.
  bool ScheduleRestart(const Role& role, const std::string& what);
  // Counts a restart of `role`: " in D s (restart N of at most M)", or
  // nullopt (and the job fails) when it used up --max-restarts. A role
  // that had run for a minute counts from zero again (it was not in a
  // crash loop: a preempted machine, a killed process).
  std::optional<std::string> TakeRestart(const Role& role,
                                         const std::string& what);
  void StartDueRestarts();
  // --supervise, the coordinator failed: schedules the restart of the whole
  // job with --resume (the recorded job in resume_job_); false (a failure)
  // without a complete round or restarts left.
  bool ScheduleJobRestart(const Role& role, const std::string& what);
  // Stops every role, waits out the backoff and starts the job again.
  Outcome RestartJob();
  Outcome StartAll();
  Outcome WaitForEndpoint();
  Outcome RunUntilCoordinatorDone();
  void AwaitShutdown();

  // One poll of the children; returns kRunning unless the job must stop.
  Outcome Step();
  void HandleEvents(const ChildEvents& events);
  void HandleLine(Role& role, const ChildLine& line);
  void HandleExit(Role& role, const ChildExit& exit);
  // A worker failed while the job runs and --stop-on-worker-failure is off.
  void WorkerFailed(const Role& role, const std::string& what);
  // Removes the cgroup a worker with a cpu= profile made for itself.
  void RemoveWorkerCpuQuotaGroup(const Role& role, pid_t pid) const;
  void Fail(const std::string& reason, const Role* role);

  // Stops every role, reports why, returns the exit code for `outcome`.
  int Abort(Outcome outcome);
  int Finish();
  double ElapsedS() const;

  LaunchOptions options_;
  RoleBinaries binaries_;
  Console* console_;
  // Declared before group_: the namespaces outlive the processes in them.
  std::unique_ptr<NetLab> lab_;
  ProcessGroup group_;
  std::map<pid_t, Role> roles_;
  std::string run_dir_;
  // Socket files of the servers' ipc data ports, removed at the end even
  // when a server was killed.
  std::vector<std::string> ipc_files_;
  std::chrono::steady_clock::time_point start_;
  pid_t coordinator_pid_ = 0;
  std::string endpoint_;
  std::string summary_json_;
  bool coordinator_done_ = false;
  // Exits are judged only while the job runs; during teardown they are
  // expected.
  bool judging_exits_ = true;
  std::string failure_;          // why the job failed; empty if it did not
  uint32_t workers_failed_ = 0;  // before the coordinator was done
  struct Restart {
    std::string role;
    int rank = 0;
    std::chrono::steady_clock::time_point at;
  };
  std::vector<Restart> restarts_;
  std::map<std::string, uint32_t> restart_counts_;  // by role label
  std::set<std::string> started_labels_;            // logs to append to
  std::optional<JobConfig> resume_job_;  // set: restart the job with it
  const Role* failed_role_ = nullptr;    // the role to blame, if any
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_LAUNCHER_H_
