// ProcessGroup: the child processes of one launcher. It starts them with
// their stdout and stderr on pipes, reads those pipes line by line without
// blocking, reaps the children, and tears them all down on request.
//
// Every child runs in its own process group (pgid == its pid), so a Ctrl-C
// on the terminal reaches only the launcher, and the launcher's signals
// reach the child's own helpers too. Every child also gets
// PR_SET_PDEATHSIG(SIGKILL), so it dies with the launcher even if the
// launcher itself is SIGKILLed: no orphans.
//
// Only pids (and the process groups they lead) started by this object are
// ever signalled, and only while the leader is unreaped (a zombie at
// worst), so the id cannot have been reused. When a child exits, what is
// left of its group (helpers it started) is SIGKILLed before it is reaped.
//
// Thread-safety: not thread-safe; use from one thread. Spawning forks the
// calling process, so create children before starting other threads.
#ifndef LOCKSTEP_TOOLS_LAUNCH_PROCESS_GROUP_H_
#define LOCKSTEP_TOOLS_LAUNCH_PROCESS_GROUP_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

// How a child ended, decoded from its wait status.
struct ExitInfo {
  bool signaled = false;
  int code = 0;  // the exit status, or the signal number if `signaled`
  bool ok() const { return !signaled && code == 0; }
  // "exited with status 3" or "was killed by signal 9".
  std::string ToString() const;
  static ExitInfo FromWaitStatus(int wait_status);
};

// One complete line a child wrote, without its trailing newline.
struct ChildLine {
  pid_t pid = 0;
  std::string name;
  bool from_stderr = false;
  std::string text;
};

struct ChildExit {
  pid_t pid = 0;
  std::string name;
  ExitInfo how;
};

// What happened since the last call. A child's last lines always come
// before its exit, in `lines`.
struct ChildEvents {
  std::vector<ChildLine> lines;
  std::vector<ChildExit> exits;
  void Append(ChildEvents&& other);
};

class ProcessGroup {
 public:
  ProcessGroup() = default;
  // Kills (SIGKILL, no grace) and reaps every child still running.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Starts argv[0] (a path, or a name looked up in PATH) with `argv`,
  // stdin on /dev/null and stdout/stderr on pipes read by Poll(). `name`
  // labels its lines and exit ("worker 2"). Fails with the exec error if the
  // program cannot be started.
  // REQUIRES: !argv.empty().
  StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                        const std::string& name);

  // Waits up to `timeout` for output or exits, then returns the complete
  // lines read and the children reaped. Returns early (possibly empty) when
  // interrupted by a signal, so the caller can check its signal flags.
  // A partial last line is returned when its pipe closes.
  ChildEvents Poll(std::chrono::milliseconds timeout);

  // Sends SIGINT ("stop now": SIGTERM is a cluster engine's "terminated,
  // end resumably", common/termination.h) to every running child's
  // process group, keeps reading
  // and reaping for up to `grace`, then SIGKILLs the rest and reaps them.
  // Returns everything read and reaped on the way. No child is left
  // running or unreaped.
  ChildEvents TerminateAll(std::chrono::milliseconds grace);

  // Children started and not yet reaped.
  size_t running() const { return children_.size(); }
  std::vector<pid_t> running_pids() const;

 private:
  struct Child {
    pid_t pid = 0;
    std::string name;
    int out_fd = -1;
    int err_fd = -1;
    std::string out_partial;
    std::string err_partial;
  };

  // Reads what is available on `*fd`; closes it at end of file.
  void ReadPipe(Child& child, bool from_stderr, ChildEvents* events);
  // Reads both pipes until nothing is left, then closes them.
  void DrainAndClose(Child& child, ChildEvents* events);
  // Reaps exited children (WNOHANG, or blocking if `block`).
  void Reap(bool block, ChildEvents* events);
  void SignalAll(int signal) const;

  std::vector<Child> children_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_PROCESS_GROUP_H_
