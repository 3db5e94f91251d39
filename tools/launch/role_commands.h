// RoleCommands: the command line of each role the launcher starts: the
// coordinator, and each server, worker and evaluator once the coordinator's
// endpoint is known. It reads the options, the binaries and the network lab
// and starts nothing, so the command lines are tested without processes. A
// role restarted under --supervise gets the same command line as at its
// first start (launcher.h).
//
// Thread-safety: const methods; safe while the objects it refers to are not
// being changed.
#ifndef LOCKSTEP_TOOLS_LAUNCH_ROLE_COMMANDS_H_
#define LOCKSTEP_TOOLS_LAUNCH_ROLE_COMMANDS_H_

#include <string>
#include <utility>
#include <vector>

#include "common/job_fields.h"
#include "tools/launch/launch_options.h"
#include "tools/launch/net_lab.h"

namespace lockstep {

// The peers of a job in the order the launcher starts them: every server,
// then every worker, then the evaluators, as (role, rank). Evaluators all
// have rank 0.
std::vector<std::pair<std::string, int>> PeerStartOrder(const JobConfig& job);

class RoleCommands {
 public:
  // Nothing is owned; `options`, `binaries` and `lab` must outlive this
  // object. `lab` is null unless --links real. `launcher_pid` names the
  // servers' ipc socket files (DataListenEndpoint).
  RoleCommands(const LaunchOptions& options, const RoleBinaries& binaries,
               const NetLab* lab, int launcher_pid);

  // The coordinator, listening on a free port of the host, writing into
  // `run_dir`. Each role gets its own key file from options.keys_dir (or
  // --security off).
  // `listen`: the endpoint to bind (empty: a free port on the host).
  std::vector<std::string> Coordinator(const std::string& run_dir,
                                       const std::string& listen = "") const;

  // A server, worker or evaluator (`role`) of rank `rank`, connecting to
  // the coordinator at `endpoint`. The evaluator runs worker 0's program
  // and device whatever `rank` is.
  std::vector<std::string> Peer(const std::string& role, int rank,
                                const std::string& endpoint) const;

  // The --listen endpoint of server `rank`'s data port.
  std::string ServerDataEndpoint(int rank) const;

 private:
  std::vector<std::string> Evaluator(std::vector<std::string> argv) const;
  // --keys with `role`'s key file, or --security off.
  void AddKeyFlags(const char* role, std::vector<std::string>* argv) const;

  const LaunchOptions& options_;
  const RoleBinaries& binaries_;
  const NetLab* lab_;
  int launcher_pid_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_ROLE_COMMANDS_H_
