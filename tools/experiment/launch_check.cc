#include "tools/experiment/launch_check.h"

#include "tools/launch/launch_options.h"

namespace lockstep {
namespace {

StatusOr<LaunchOptions> Parse(const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  args.reserve(argv.size());
  for (const std::string& a : argv) args.push_back(a.c_str());
  return ParseLaunchFlags(static_cast<int>(args.size()), args.data());
}

}  // namespace

std::vector<std::string> LaunchCommand::Argv(size_t launch_flags) const {
  std::vector<std::string> argv = job;
  for (size_t i = 0; i < launch_flags && i < launch.size(); ++i) {
    argv.insert(argv.end(), {launch[i].flag, launch[i].value});
  }
  argv.insert(argv.end(), run.begin(), run.end());
  return argv;
}

StatusOr<JobConfig> CheckLaunchCommand(const LaunchCommand& command,
                                       const std::string& job_where) {
  StatusOr<LaunchOptions> whole = Parse(command.Argv());
  if (whole.ok()) return std::move(whole->job);
  // The refusal is the spec's launch flags' if the job alone passes: then
  // the first one whose addition fails is the one to name.
  if (!command.launch.empty()) {
    for (size_t n = 0; n <= command.launch.size(); ++n) {
      StatusOr<LaunchOptions> part = Parse(command.Argv(n));
      if (part.ok()) continue;
      if (n == 0) break;
      return InvalidArgument(command.launch[n - 1].where + ": " +
                             part.status().message());
    }
  }
  return InvalidArgument(job_where + whole.status().message());
}

}  // namespace lockstep
