#include "tools/launch/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <utility>

#include "common/coordinator_watch.h"
#include "common/json.h"
#include "common/security/job_keys.h"
#include "common/transport/data_channel.h"
#include "tools/launch/hetero_spec.h"
#include "tools/launch/run_dir.h"
#include "tools/launch/stop_signal.h"

namespace lockstep {
namespace {

constexpr std::chrono::milliseconds kPollPeriod(200);

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

Launcher::Launcher(LaunchOptions options, RoleBinaries binaries,
                   Console* console)
    : options_(std::move(options)),
      binaries_(std::move(binaries)),
      console_(console),
      roles_(console, options_.verbose),
      supervisor_(options_.max_restarts),
      monitor_(options_, console, &roles_, &supervisor_) {}

Launcher::~Launcher() {
  for (const std::string& path : ipc_files_) unlink(path.c_str());
}

int Launcher::Run() {
  monitor_.StartClock();
  InstallStopSignalHandlers();
  if (options_.links == "real") {
    if (Status status = BuildNetLab(); !status.ok()) {
      console_->Message(status.message());
      return 1;
    }
  }
  if (Status status = PrepareRunDir(); !status.ok()) {
    console_->Message(status.message());
    return 1;
  }
  // Supervised roles outlive their coordinator: a restarted one takes
  // them back (common/coordinator_watch.h). The user's setting stands.
  if (options_.supervise) setenv(kReattachEnv, "60", 0);
  JobOutcome outcome = StartAll();
  while (true) {
    if (outcome == JobOutcome::kRunning) outcome = RunUntilCoordinatorDone();
    if (outcome != JobOutcome::kRestart) break;
    outcome = RestartJob();
  }
  if (outcome != JobOutcome::kRunning) return Abort(outcome);
  AwaitShutdown();
  monitor_.ReportDone(run_dir_);
  return 0;
}

Status Launcher::BuildNetLab() {
  // Whether this machine can is CheckLaunchHost's (launch_main.cc).
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
    // A run directory holds one run: starting another there would write
    // over its records (and, with its snapshots, be refused later).
    if (!options_.resume &&
        std::filesystem::exists(std::filesystem::path(run_dir_) /
                                "config.json")) {
      return FailedPrecondition(
          "--run-dir " + run_dir_ +
          " holds a run already (config.json): continue it with --resume " +
          run_dir_ + ", or choose another --run-dir");
    }
    LS_RETURN_IF_ERROR(CreateRunDir(run_dir_));
  }
  run_dir_ = std::filesystem::absolute(run_dir_).lexically_normal().string();
  if (run_dir_.size() > 1 && run_dir_.back() == '/') run_dir_.pop_back();
  LS_RETURN_IF_ERROR(PrepareKeys());
  JobConfig& job = options_.job;
  if (job.snapshots() && job.snapshot_dir.empty()) {
    job.snapshot_dir = run_dir_ + "/snapshots";
  }
  JsonObject launcher;
  launcher.Add("host", options_.host).Add("timeout_s", options_.timeout_s);
  launcher.Add("data_transport", options_.data_transport);
  launcher.Add("links", options_.links);
  launcher.Add("security", options_.security);
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

Status Launcher::PrepareKeys() {
  options_.keys_dir = run_dir_ + "/keys";
  const std::string any =
      options_.keys_dir + "/" + KeyFileName(KeyRole::kAdmin);
  if (options_.security == "off" && std::filesystem::exists(any)) {
    // Its roles' ports would take anyone, and the keys it was started
    // with say that it was not meant to.
    return FailedPrecondition(
        options_.keys_dir +
        " holds the keys this run was started with: --security off would "
        "open its ports to anyone (drop --security off, or use a new run "
        "directory)");
  }
  if (options_.security == "off") {
    console_->Message(
        "warning: --security off: the job's ports take anyone who reaches "
        "them (joining, reading or poisoning the model, stopping the job)");
    options_.keys_dir.clear();
    return Status::Ok();
  }
  // A resumed job keeps its keys.
  LS_ASSIGN_OR_RETURN(DataSecurity mode, ParseDataSecurity(options_.security));
  if (!std::filesystem::exists(any))
    return WriteJobKeys(options_.keys_dir, mode);
  // The keys name the data plane's mode: one other than asked for would
  // quietly run the job another way.
  LS_ASSIGN_OR_RETURN(RoleKeys kept, LoadRoleKeys(any));
  if (kept.data_plane != mode) {
    return FailedPrecondition(
        options_.keys_dir + " holds keys of a " +
        DataSecurityName(kept.data_plane) + " data plane, not --security " +
        options_.security + " (launch with --security " +
        DataSecurityName(kept.data_plane) + ", or use a new run directory)");
  }
  return Status::Ok();
}

RoleCommands Launcher::Commands() const {
  return RoleCommands(options_, binaries_, lab_.get(), getpid());
}

JobOutcome Launcher::StartAll() {
  if (!options_.worker_commands.empty()) PreparePythonWorkers(binaries_.worker);
  // Workers on an emulated machine (profile item machine=NAME) share its
  // load file there (worker/emulation/machine_load_monitor.h, kDirVariable).
  setenv("LOCKSTEP_MACHINE_DIR", (run_dir_ + "/machines").c_str(), 1);
  if (Status s = roles_.Start(run_dir_, "coordinator", 0,
                              Commands().Coordinator(run_dir_));
      !s.ok()) {
    monitor_.Fail(s.message(), nullptr);
    return JobOutcome::kFailed;
  }
  // The peers are told the coordinator's endpoint on their command line,
  // so none starts before the coordinator printed it.
  if (JobOutcome o = WaitForEndpoint(); o != JobOutcome::kRunning) return o;
  for (const auto& [role, rank] : PeerStartOrder(options_.job)) {
    if (Status s = StartPeer(role, rank); !s.ok()) {
      monitor_.Fail(s.message(), nullptr);
      return JobOutcome::kFailed;
    }
  }
  return JobOutcome::kRunning;
}

Status Launcher::StartPeer(const std::string& role, int rank) {
  const RoleCommands commands = Commands();
  if (role == "server") {
    // Removed when the launcher ends (~Launcher), even if this server is
    // killed after it bound the socket.
    if (std::string path = IpcSocketPath(commands.ServerDataEndpoint(rank));
        !path.empty() && std::find(ipc_files_.begin(), ipc_files_.end(),
                                   path) == ipc_files_.end()) {
      ipc_files_.push_back(std::move(path));
    }
  }
  return roles_.Start(run_dir_, role, rank,
                      commands.Peer(role, rank, monitor_.endpoint()));
}

JobOutcome Launcher::WaitForEndpoint() {
  const auto deadline = std::chrono::steady_clock::now() + kEndpointWait;
  const RoleProcess* coordinator = roles_.Find(roles_.coordinator_pid());
  while (monitor_.endpoint().empty()) {
    if (JobOutcome o = Step(); o != JobOutcome::kRunning) return o;
    if (monitor_.coordinator_done()) {
      monitor_.Fail("the coordinator exited before printing its @endpoint line",
                    coordinator);
      return JobOutcome::kFailed;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      monitor_.Fail("the coordinator printed no @endpoint line within " +
                        std::to_string(kEndpointWait.count()) + " s",
                    coordinator);
      return JobOutcome::kFailed;
    }
  }
  return JobOutcome::kRunning;
}

JobOutcome Launcher::RunUntilCoordinatorDone() {
  while (!monitor_.coordinator_done()) {
    if (JobOutcome o = Step(); o != JobOutcome::kRunning) return o;
  }
  return JobOutcome::kRunning;
}

JobOutcome Launcher::Step() {
  monitor_.Handle(roles_.Poll(kPollPeriod));
  StartDueRestarts();
  return monitor_.State();
}

void Launcher::StartDueRestarts() {
  // Once the coordinator is done the job has ended: a restarted role would
  // have no job to join.
  if (monitor_.coordinator_done()) return;
  for (const Supervisor::PendingRestart& due :
       supervisor_.TakeDue(std::chrono::steady_clock::now())) {
    if (Status s = StartPeer(due.role, due.rank); !s.ok()) {
      monitor_.Fail(s.message(), nullptr);
    }
  }
}

JobOutcome Launcher::RestartJob() {
  // With a re-attach window the other roles wait for the new coordinator
  // at the old endpoint; without, every role starts again with the job.
  const bool roles_stay = RolesReattach();
  if (!roles_stay) StopAll();
  monitor_.set_judging_exits(true);  // the new job's exits count again
  options_.job = monitor_.TakeResumeJob();
  options_.resume = true;
  const auto until =
      std::chrono::steady_clock::now() + supervisor_.JobRestartDelay();
  // Stepping, not sleeping, through the backoff: a stop signal or the
  // timeout still ends the job.
  while (std::chrono::steady_clock::now() < until) {
    if (JobOutcome o = Step(); o != JobOutcome::kRunning) return o;
  }
  if (roles_stay) {
    if (Status s =
            roles_.Start(run_dir_, "coordinator", 0,
                         Commands().Coordinator(run_dir_, monitor_.endpoint()));
        !s.ok()) {
      monitor_.Fail(s.message(), nullptr);
      return JobOutcome::kFailed;
    }
    return JobOutcome::kRunning;
  }
  // Every role starts again with the job: the roles' own pending restarts
  // and the old coordinator's endpoint are void.
  supervisor_.ClearPending();
  monitor_.ClearEndpoint();
  return StartAll();
}

void Launcher::AwaitShutdown() {
  const auto deadline = std::chrono::steady_clock::now() + kShutdownWait;
  while (roles_.running() > 0 && StopSignal() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    monitor_.Handle(roles_.Poll(kPollPeriod));
  }
  if (roles_.running() == 0) return;
  console_->Message("warning: stopping what did not exit within " +
                    std::to_string(kShutdownWait.count()) +
                    " s after the job ended: " + roles_.RunningLabels());
  StopAll();
}

void Launcher::StopAll() {
  monitor_.set_judging_exits(false);
  monitor_.Handle(roles_.TerminateAll(kTerminateGrace));
}

int Launcher::Abort(JobOutcome outcome) {
  monitor_.ReportStopping(outcome, roles_.running());
  StopAll();
  // After the teardown: the failed role's last lines include what it
  // printed while it was stopped.
  monitor_.ReportStopped(run_dir_);
  return JobMonitor::ExitCode(outcome);
}

}  // namespace lockstep
