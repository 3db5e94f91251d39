#include "tools/launch/worker_command.h"

#include <sstream>

#include "tools/launch/per_worker_spec.h"

namespace lockstep {

StatusOr<WorkerCommands> ResolveWorkerCmdFlag(const std::string& flag,
                                              uint32_t workers) {
  LS_ASSIGN_OR_RETURN(
      PerWorker text,
      ResolvePerWorker(flag, workers, "--worker-cmd", kWorkerCmdGrammar,
                       [](const std::string& cmd) { return !cmd.empty(); }));
  WorkerCommands commands;
  for (const auto& [rank, cmd] : text) {
    if (cmd == "lockstep-worker") continue;
    std::istringstream words(cmd);
    std::vector<std::string> argv;
    for (std::string word; words >> word;) argv.push_back(word);
    commands[rank] = std::move(argv);
  }
  return commands;
}

}  // namespace lockstep
