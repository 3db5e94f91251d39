// lockstep-experiment: compares sync policies on the same job.
#include <fstream>
#include <iostream>

#include "common/main_guard.h"
#include "tools/experiment.h"
#include "tools/launch_options.h"

namespace {

int Main(int argc, char** argv) {
  auto options = lockstep::ParseExperimentFlags(argc, argv);
  if (!options.ok()) {
    if (options.status().code() == lockstep::StatusCode::kNotFound) {
      std::cout << options.status().message() << std::endl;  // --help
      return 0;
    }
    std::cerr << "lockstep-experiment: " << options.status().message()
              << std::endl;
    return 2;
  }
  if (options->launcher.empty()) {
    auto dir = lockstep::SelfExeDir();
    if (!dir.ok()) {
      std::cerr << "lockstep-experiment: " << dir.status().message()
                << std::endl;
      return 2;
    }
    options->launcher = *dir + "/lockstep-launch";
  }
  auto results = lockstep::RunExperiment(*options);
  if (!results.ok()) {
    std::cerr << "lockstep-experiment: " << results.status().message()
              << std::endl;
    return 1;
  }
  const std::string table =
      lockstep::FormatResults(*results, options->baseline);
  std::cout << table;
  std::ofstream(options->out_dir + "/results.md") << table;
  int failed = 0;
  for (const auto& r : *results) failed += r.failed;
  return failed > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-experiment", Main, argc, argv);
}
