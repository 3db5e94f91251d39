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
//     role is stopped (SIGINT, kTerminateGrace, SIGKILL), the failed role
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
//     newest complete snapshot round (supervisor.h).
//   - --timeout-s passes first: everything is stopped. Exit code 124.
//   - SIGINT/SIGTERM reaches the launcher: everything is stopped. Exit 130.
//
// The work is shared out: RoleCommands builds each role's command line,
// RoleProcesses starts the roles and keeps their logs, the Supervisor
// decides restarts and their backoff, and the JobMonitor judges what the
// roles print and how they exit, and reports the end. The Launcher owns
// them all and runs the job's phases in order: prepare, start, watch,
// restart, shut down.
//
// Thread-safety: not thread-safe. Run() installs process-wide SIGINT and
// SIGTERM handlers, so run at most one Launcher per process.
#ifndef LOCKSTEP_TOOLS_LAUNCH_LAUNCHER_H_
#define LOCKSTEP_TOOLS_LAUNCH_LAUNCHER_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tools/launch/console.h"
#include "tools/launch/job_monitor.h"
#include "tools/launch/launch_options.h"
#include "tools/launch/net_lab.h"
#include "tools/launch/role_commands.h"
#include "tools/launch/role_processes.h"
#include "tools/launch/supervisor.h"

namespace lockstep {

class Launcher {
 public:
  static constexpr std::chrono::seconds kEndpointWait{30};
  static constexpr std::chrono::seconds kShutdownWait{10};
  static constexpr std::chrono::seconds kTerminateGrace{3};

  // `console` is not owned and must outlive the launcher.
  Launcher(LaunchOptions options, RoleBinaries binaries, Console* console);
  ~Launcher();
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Runs the job to its end and returns the launcher's exit code (above).
  int Run();

 private:
  Status PrepareRunDir();
  // --links real: the namespaces every role runs in; binds their address.
  Status BuildNetLab();
  // The command lines of the roles, from the options as they are now.
  RoleCommands Commands() const;
  // Makes the job's keys in RUN_DIR/keys (a resumed job keeps its own), or
  // warns that --security off runs without.
  Status PrepareKeys();
  // Starts the coordinator, waits for its endpoint, then starts the peers.
  JobOutcome StartAll();
  // Starts server, worker or evaluator `rank` (`role`).
  Status StartPeer(const std::string& role, int rank);
  JobOutcome WaitForEndpoint();
  JobOutcome RunUntilCoordinatorDone();
  // One poll of the children; returns kRunning unless the job must stop.
  JobOutcome Step();
  void StartDueRestarts();
  // Stops every role, waits out the backoff and starts the job again.
  JobOutcome RestartJob();
  void AwaitShutdown();
  // Stops every role; their exits are not judged.
  void StopAll();
  // Stops every role, reports why, returns the exit code for `outcome`.
  int Abort(JobOutcome outcome);

  LaunchOptions options_;
  RoleBinaries binaries_;
  Console* console_;
  // Declared before roles_: the namespaces outlive the processes in them.
  std::unique_ptr<NetLab> lab_;
  RoleProcesses roles_;
  Supervisor supervisor_;
  // Declared after roles_ and supervisor_, which it points to: it is
  // destroyed first.
  JobMonitor monitor_;
  std::string run_dir_;
  // Socket files of the servers' ipc data ports, removed at the end even
  // when a server was killed.
  std::vector<std::string> ipc_files_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_LAUNCHER_H_
