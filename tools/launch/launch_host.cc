#include "tools/launch/launch_host.h"

#include "tools/launch/net_lab.h"

namespace lockstep {

StatusOr<RoleBinaries> CheckLaunchHost(const LaunchOptions& options,
                                       const std::string& launcher_dir) {
  LS_ASSIGN_OR_RETURN(RoleBinaries binaries,
                      FindRoleBinaries(options.bin_dir, launcher_dir));
  if (options.links == "real") {
    if (const std::string why = NetLab::Unavailable(); !why.empty()) {
      return FailedPrecondition("--links real: " + why);
    }
  }
  return binaries;
}

}  // namespace lockstep
