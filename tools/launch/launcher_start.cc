// Launcher: getting the job going — the run directory and its config, the
// network lab for --links real, each role's command line, and the wait for
// the coordinator's endpoint.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "common/json.h"
#include "common/transport/data_channel.h"
#include "tools/launch/hetero_spec.h"
#include "tools/launch/launcher.h"
#include "tools/launch/run_dir.h"

namespace lockstep {

Status Launcher::BuildNetLab() {
  if (const std::string why = NetLab::Unavailable(); !why.empty()) {
    return FailedPrecondition("--links real: " + why);
  }
  LS_ASSIGN_OR_RETURN(
      lab_, NetLab::Create(options_.job.workers, std::to_string(getpid())));
  options_.host = NetLab::HubAddress();
  if (options_.data_transport == "auto") options_.data_transport = "tcp";
  return Status::Ok();
}

Status Launcher::PrepareRunDir() {
  if (options_.run_dir.empty()) {
    const std::string name =
        DefaultRunDirName(options_.job.sync, std::time(nullptr));
    LS_ASSIGN_OR_RETURN(run_dir_, CreateFreshRunDir(name));
  } else {
    run_dir_ = options_.run_dir;
    LS_RETURN_IF_ERROR(CreateRunDir(run_dir_));
  }
  run_dir_ = std::filesystem::absolute(run_dir_).lexically_normal().string();
  if (run_dir_.size() > 1 && run_dir_.back() == '/') run_dir_.pop_back();
  JobConfig& job = options_.job;
  if (job.snapshots() && job.snapshot_dir.empty()) {
    job.snapshot_dir = run_dir_ + "/snapshots";
  }
  JsonObject launcher;
  launcher.Add("host", options_.host).Add("timeout_s", options_.timeout_s);
  launcher.Add("data_transport", options_.data_transport);
  launcher.Add("links", options_.links);
  JsonObject devices;  // "0": "cuda", ... (workers without one use cpu)
  for (const auto& [rank, device] : options_.devices) {
    devices.Add(std::to_string(rank), device);
  }
  launcher.AddRaw("devices", devices.str());
  launcher.Add("worker_cmd", options_.worker_cmd);
  launcher.Add("verbose", options_.verbose);
  launcher.Add("stop_on_worker_failure", options_.stop_on_worker_failure);
  launcher.Add("coordinator_binary", binaries_.coordinator);
  launcher.Add("server_binary", binaries_.server);
  launcher.Add("worker_binary", binaries_.worker);
  const std::string config =
      ConfigJson(options_.job, options_.command, MachineInfo::Current(),
                 UtcTimestamp(std::time(nullptr)), launcher.str(),
                 HeteroJson(options_.hetero_profiles));
  // A resumed run keeps the config it started with, and adds its own.
  return WriteFileAtomically(
      run_dir_ + (options_.resume ? "/config-resumed.json" : "/config.json"),
      config);
}

Status Launcher::StartRole(const std::string& role, int rank,
                           const std::vector<std::string>& argv) {
  Role r;
  r.role = role;
  r.rank = rank;
  r.label = role == "coordinator" || role == "evaluator"
                ? role
                : role + " " + std::to_string(rank);
  r.log_path = RoleLogPath(run_dir_, role, rank);
  // A restarted role appends to its log.
  const bool again = !started_labels_.insert(r.label).second;
  r.log.reset(std::fopen(r.log_path.c_str(), again ? "ae" : "we"));
  if (!r.log) return IOError("cannot create " + r.log_path);
  LS_ASSIGN_OR_RETURN(const pid_t pid, group_.Spawn(argv, r.label));
  if (options_.verbose) {
    console_->Message("started " + r.label + " (pid " + std::to_string(pid) +
                      ")");
  }
  if (role == "coordinator") coordinator_pid_ = pid;
  roles_.emplace(pid, std::move(r));
  return Status::Ok();
}

namespace {

// Workers run by --worker-cmd import the lockstep package of this build
// (build/python, beside build/bin) first, and their output reaches the
// logs as it is written.
void PreparePythonWorkers(const std::string& worker_binary) {
  const std::filesystem::path python =
      std::filesystem::path(worker_binary).parent_path().parent_path() /
      "python";
  if (std::filesystem::exists(python / "lockstep")) {
    std::string path = python.string();
    const char* old = std::getenv("PYTHONPATH");
    if (old != nullptr && *old != '\0') path += ":" + std::string(old);
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  setenv("PYTHONUNBUFFERED", "1", 0);
}

}  // namespace

Launcher::Outcome Launcher::StartAll() {
  if (!options_.worker_commands.empty()) PreparePythonWorkers(binaries_.worker);
  // Workers on an emulated machine (profile item machine=NAME) share its
  // load file there (worker/emulation/machine_load_monitor.h, kDirVariable).
  setenv("LOCKSTEP_MACHINE_DIR", (run_dir_ + "/machines").c_str(), 1);
  const std::string listen = "tcp://" + options_.host + ":0";
  std::vector<std::string> argv = {binaries_.coordinator};
  for (std::string& flag : JobConfigToFlags(options_.job)) {
    argv.push_back(std::move(flag));
  }
  argv.insert(argv.end(), {"--listen", listen, "--run-dir", run_dir_});
  if (options_.resume) argv.push_back("--resume");
  if (options_.verbose) argv.push_back("-v");
  if (lab_ != nullptr) argv = NetLab::InNamespace(lab_->hub(), std::move(argv));
  if (Status s = StartRole("coordinator", 0, argv); !s.ok()) {
    Fail(s.message(), nullptr);
    return Outcome::kFailed;
  }
  if (Outcome o = WaitForEndpoint(); o != Outcome::kRunning) return o;
  const uint32_t peers =
      options_.job.servers + options_.job.workers + options_.job.evaluators;
  for (uint32_t i = 0; i < peers; ++i) {
    const bool server = i < options_.job.servers;
    const bool worker =
        !server && i < options_.job.servers + options_.job.workers;
    const std::string role = server   ? "server"
                             : worker ? "worker"
                                      : "evaluator";
    const int rank = static_cast<int>(server   ? i
                                      : worker ? i - options_.job.servers
                                               : 0);
    if (Status s = StartRole(role, rank, PeerArgv(role, rank)); !s.ok()) {
      Fail(s.message(), nullptr);
      return Outcome::kFailed;
    }
  }
  return Outcome::kRunning;
}

std::vector<std::string> Launcher::PeerArgv(const std::string& role, int rank) {
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
  argv.insert(argv.end(), {"--coordinator", endpoint_});
  if (evaluator) {
    argv.push_back("--evaluator");
    const auto device = options_.devices.find(rank);
    if (device != options_.devices.end()) {
      argv.insert(argv.end(), {"--device", device->second});
    }
    if (options_.verbose) argv.push_back("-v");
    if (lab_ != nullptr)
      return NetLab::InNamespace(lab_->hub(), std::move(argv));
    return argv;
  }
  if (server) {
    // A restarted server binds the same data endpoint (an ipc path is
    // unlinked and bound again; a tcp port 0 picks a new port, which the
    // coordinator passes on to the workers).
    const std::string data = DataListenEndpoint(options_.data_transport,
                                                options_.host, rank, getpid());
    if (std::string path = IpcSocketPath(data);
        !path.empty() && std::find(ipc_files_.begin(), ipc_files_.end(),
                                   path) == ipc_files_.end()) {
      ipc_files_.push_back(std::move(path));
    }
    argv.insert(argv.end(), {"--listen", data});
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

Launcher::Outcome Launcher::WaitForEndpoint() {
  const auto deadline = std::chrono::steady_clock::now() + kEndpointWait;
  const Role* coordinator = &roles_.at(coordinator_pid_);
  while (endpoint_.empty()) {
    if (Outcome o = Step(); o != Outcome::kRunning) return o;
    if (coordinator_done_) {
      Fail("the coordinator exited before printing its @endpoint line",
           coordinator);
      return Outcome::kFailed;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      Fail("the coordinator printed no @endpoint line within " +
               std::to_string(kEndpointWait.count()) + " s",
           coordinator);
      return Outcome::kFailed;
    }
  }
  return Outcome::kRunning;
}

}  // namespace lockstep
