// RoleProcesses: the running roles of one launcher. It starts each role
// with its log file (<run dir>/logs/<role>-<rank>.log), copies every line
// a role writes into that log and into the role's tail (its last lines,
// shown when it fails), and keeps the table from pid to role. Restarted
// roles append to the log of their first start.
//
// Roles are never removed from the table, even after they exit: a failed
// role is reported (by pointer) after every process is stopped.
//
// Thread-safety: not thread-safe; use from the launcher's thread. Owns a
// ProcessGroup, so the same rules apply (start children before threads).
#ifndef LOCKSTEP_TOOLS_LAUNCH_ROLE_PROCESSES_H_
#define LOCKSTEP_TOOLS_LAUNCH_ROLE_PROCESSES_H_

#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/launch/console.h"
#include "tools/launch/process_group.h"

namespace lockstep {

// "coordinator" or "evaluator" (one each per job), else "server 1",
// "worker 2": how a role is named on the console and in messages.
std::string RoleLabel(const std::string& role, int rank);

// One started role process.
struct RoleProcess {
  std::string role;  // "coordinator", "server", "worker", "evaluator"
  int rank = 0;
  std::string label;  // "coordinator", "server 1", "worker 2"
  std::string log_path;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> log{nullptr, &std::fclose};
  std::deque<std::string> tail;
  std::chrono::steady_clock::time_point started =
      std::chrono::steady_clock::now();
};

class RoleProcesses {
 public:
  // Lines of each role kept to show when it fails.
  static constexpr size_t kTailLines = 20;

  // `console` is not owned and must outlive this object; with `verbose`
  // every start is announced ("started worker 2 (pid N)"), which tests
  // read to find a role's pid.
  RoleProcesses(Console* console, bool verbose);

  // Opens the role's log under `run_dir` (appending if this label was
  // started before) and starts `argv` as that role.
  Status Start(const std::string& run_dir, const std::string& role, int rank,
               const std::vector<std::string>& argv);

  // The role started as `pid`, or null for a pid this object did not start.
  RoleProcess* Find(pid_t pid);
  // The newest coordinator's pid; 0 before one was started.
  pid_t coordinator_pid() const { return coordinator_pid_; }

  // Writes `text` to `role`'s log and keeps it in its tail.
  static void RecordLine(RoleProcess& role, const std::string& text);
  // Notes the launcher's view of `role` ("# lockstep-launch: ...") in its
  // log, without keeping it in the tail.
  static void RecordNote(RoleProcess& role, const std::string& text);

  // See ProcessGroup::Poll and ProcessGroup::TerminateAll.
  ChildEvents Poll(std::chrono::milliseconds timeout);
  ChildEvents TerminateAll(std::chrono::milliseconds grace);

  size_t running() const { return group_.running(); }
  // The labels of the roles still running: "server 0, worker 1".
  std::string RunningLabels() const;

 private:
  Console* console_;
  bool verbose_;
  ProcessGroup group_;
  std::map<pid_t, RoleProcess> roles_;
  pid_t coordinator_pid_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_ROLE_PROCESSES_H_
