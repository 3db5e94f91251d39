// What a launch needs of this machine beside flags that parse: the role
// binaries (beside the launcher, or in --bin-dir) and, for --links real,
// network namespaces and tc that work. lockstep-launch checks it before it
// starts anything, and lockstep-experiment once before its first run, so
// an experiment that could never run says so at once instead of failing
// every run.
// Thread-safety: reentrant (the --links real probe makes and removes a
// network namespace of its own).
#ifndef LOCKSTEP_TOOLS_LAUNCH_LAUNCH_HOST_H_
#define LOCKSTEP_TOOLS_LAUNCH_LAUNCH_HOST_H_

#include <string>

#include "common/status.h"
#include "tools/launch/launch_options.h"

namespace lockstep {

// The role binaries `options` will run (FindRoleBinaries, `launcher_dir`
// the launcher's folder) once this machine can run them. Errors: a binary
// missing, or --links real where this machine cannot make real links
// (not root, no netns or tc), naming the flag.
StatusOr<RoleBinaries> CheckLaunchHost(const LaunchOptions& options,
                                       const std::string& launcher_dir);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_LAUNCH_HOST_H_
