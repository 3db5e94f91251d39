#include "tools/launch/role_commands.h"

#include <utility>

namespace lockstep {

std::vector<std::pair<std::string, int>> PeerStartOrder(const JobConfig& job) {
  std::vector<std::pair<std::string, int>> order;
  const uint32_t peers = job.servers + job.workers + job.evaluators;
  for (uint32_t i = 0; i < peers; ++i) {
    const bool server = i < job.servers;
    const bool worker = !server && i < job.servers + job.workers;
    const std::string role = server   ? "server"
                             : worker ? "worker"
                                      : "evaluator";
    const int rank = static_cast<int>(server   ? i
                                      : worker ? i - job.servers
                                               : 0);
    order.emplace_back(role, rank);
  }
  return order;
}

RoleCommands::RoleCommands(const LaunchOptions& options,
                           const RoleBinaries& binaries, const NetLab* lab,
                           int launcher_pid)
    : options_(options),
      binaries_(binaries),
      lab_(lab),
      launcher_pid_(launcher_pid) {}

std::vector<std::string> RoleCommands::Coordinator(
    const std::string& run_dir, const std::string& endpoint) const {
  const std::string listen =
      endpoint.empty() ? "tcp://" + options_.host + ":0" : endpoint;
  std::vector<std::string> argv = {binaries_.coordinator};
  for (std::string& flag : JobConfigToFlags(options_.job)) {
    argv.push_back(std::move(flag));
  }
  argv.insert(argv.end(), {"--listen", listen, "--run-dir", run_dir,
                           "--metrics-listen", options_.metrics_listen});
  if (!options_.metrics_token_file.empty()) {
    argv.insert(argv.end(),
                {"--metrics-token-file", options_.metrics_token_file});
  }
  AddKeyFlags("coordinator", &argv);
  if (options_.resume) argv.push_back("--resume");
  if (options_.verbose) argv.push_back("-v");
  if (lab_ != nullptr) argv = NetLab::InNamespace(lab_->hub(), std::move(argv));
  return argv;
}

std::vector<std::string> RoleCommands::Peer(const std::string& role, int rank,
                                            const std::string& endpoint) const {
  const bool server = role == "server";
  // The evaluator runs worker 0's program (its model, its device), with
  // --evaluator: it must describe the workers' job.
  const bool evaluator = role == "evaluator";
  if (evaluator) rank = 0;
  std::vector<std::string> argv = {server ? binaries_.server
                                          : binaries_.worker};
  const auto command = options_.worker_commands.find(rank);
  if (!server && command != options_.worker_commands.end()) {
    argv = command->second;
  }
  argv.insert(argv.end(), {"--coordinator", endpoint});
  AddKeyFlags(server ? "server" : "worker", &argv);
  if (evaluator) return Evaluator(std::move(argv));
  if (server) {
    // A restarted server binds the same data endpoint (an ipc path is
    // unlinked and bound again; a tcp port 0 picks a new port, which the
    // coordinator passes on to the workers).
    argv.insert(argv.end(), {"--listen", ServerDataEndpoint(rank)});
  }
  argv.insert(argv.end(), {"--rank", std::to_string(rank)});
  const auto hetero = options_.hetero_profiles.find(rank);
  if (!server && hetero != options_.hetero_profiles.end()) {
    argv.insert(argv.end(), {"--hetero", hetero->second});
  }
  const auto device = options_.devices.find(rank);
  if (!server && device != options_.devices.end()) {
    argv.insert(argv.end(), {"--device", device->second});
  }
  if (options_.verbose) argv.push_back("-v");
  if (lab_ != nullptr && !server) {
    argv.insert(argv.end(), {"--real-link", lab_->RealLinkFlag(rank)});
    return NetLab::InNamespace(lab_->WorkerNamespace(rank), std::move(argv));
  }
  if (lab_ != nullptr) return NetLab::InNamespace(lab_->hub(), std::move(argv));
  return argv;
}

// `argv`: the evaluator's program and its --coordinator flag.
std::vector<std::string> RoleCommands::Evaluator(
    std::vector<std::string> argv) const {
  argv.push_back("--evaluator");
  const auto device = options_.devices.find(0);
  if (device != options_.devices.end()) {
    argv.insert(argv.end(), {"--device", device->second});
  }
  if (options_.verbose) argv.push_back("-v");
  if (lab_ != nullptr) return NetLab::InNamespace(lab_->hub(), std::move(argv));
  return argv;
}

void RoleCommands::AddKeyFlags(const char* role,
                               std::vector<std::string>* argv) const {
  if (options_.security == "off") {
    argv->insert(argv->end(), {"--security", "off"});
    return;
  }
  argv->insert(argv->end(),
               {"--keys", options_.keys_dir + "/" + role + ".key"});
}

std::string RoleCommands::ServerDataEndpoint(int rank) const {
  return DataListenEndpoint(options_.data_transport, options_.host, rank,
                            launcher_pid_);
}

}  // namespace lockstep
