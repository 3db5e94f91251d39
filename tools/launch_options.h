// The launcher's command line: the job flags shared with the coordinator
// (AddJobFlags) plus the launcher's own (--run-dir, -v, --bin-dir, --host,
// --timeout-s, --help), and where to find the role binaries.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_LAUNCH_OPTIONS_H_
#define LOCKSTEP_TOOLS_LAUNCH_OPTIONS_H_

#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"

namespace lockstep {

struct LaunchOptions {
  JobConfig job;
  // Empty: runs/<UTC timestamp>-<sync> under the current directory.
  std::string run_dir;
  bool verbose = false;
  // Empty: next to the lockstep-launch executable (see FindRoleBinaries).
  std::string bin_dir;
  // The address every role binds and connects on. Loopback by default: a
  // single-machine job must not listen on the network.
  std::string host = "127.0.0.1";
  // Wall-clock limit for the whole job; 0 = none.
  double timeout_s = 0;
  // argv as given, recorded in config.json.
  std::vector<std::string> command;
  // --help was given; nothing else is validated then.
  bool help = false;
};

// Parses and validates argv. Returns InvalidArgument with a one-line reason
// on an unknown flag, a malformed value or an invalid job.
StatusOr<LaunchOptions> ParseLaunchFlags(int argc, const char* const* argv);

// The --help text: usage line and every flag with its default.
std::string LaunchUsage();

// The three role executables.
struct RoleBinaries {
  std::string coordinator;  // lockstep-coordinator
  std::string server;       // lockstep-server
  std::string worker;       // lockstep-worker
};

// Finds the role binaries. With an explicit `bin_dir`, only there. Without
// one, in `launcher_dir` (an install puts all binaries together) and then
// in the build tree's layout: `launcher_dir`/../server and ../worker.
// Returns NotFound naming the missing binary and where it was looked for.
StatusOr<RoleBinaries> FindRoleBinaries(const std::string& bin_dir,
                                        const std::string& launcher_dir);

// The directory of the running executable (from /proc/self/exe).
StatusOr<std::string> SelfExeDir();

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_OPTIONS_H_
