// lockstep-launch: runs one training job on this machine. See
// tools/launch/launcher.h for what it does and tools/launch/launch_options.h
// for flags.
#include <unistd.h>

#include <iostream>
#include <string>
#include <utility>

#include "common/main_guard.h"
#include "tools/launch/console.h"
#include "tools/launch/launch_host.h"
#include "tools/launch/launch_options.h"
#include "tools/launch/launcher.h"

namespace {

constexpr int kBadInput = 2;

int Main(int argc, char** argv) {
  using lockstep::StatusOr;
  StatusOr<lockstep::LaunchOptions> options =
      lockstep::ParseLaunchFlags(argc, argv);
  if (!options.ok()) {
    std::cerr << "lockstep-launch: " << options.status().message() << "\n";
    return kBadInput;
  }
  if (options->help) {
    std::cout << lockstep::LaunchUsage();
    return 0;
  }
  StatusOr<std::string> self_dir = lockstep::SelfExeDir();
  if (!self_dir.ok() && options->bin_dir.empty()) {
    std::cerr << "lockstep-launch: " << self_dir.status().message() << "\n";
    return kBadInput;
  }
  StatusOr<lockstep::RoleBinaries> binaries =
      lockstep::CheckLaunchHost(*options, self_dir.ok() ? *self_dir : "");
  if (!binaries.ok()) {
    std::cerr << "lockstep-launch: " << binaries.status().message() << "\n";
    return kBadInput;
  }
  lockstep::Console console(stdout, stderr, isatty(STDOUT_FILENO) == 1,
                            options->verbose);
  lockstep::Launcher launcher(std::move(options).value(),
                              std::move(binaries).value(), &console);
  return launcher.Run();
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-launch", Main, argc, argv);
}
