#include "tools/launch/launcher.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <utility>

#include "tools/launch/hetero_spec.h"
#include "tools/launch/progress.h"
#include "tools/launch/run_dir.h"
#include "tools/launch/stop_signal.h"

namespace lockstep {
namespace {

constexpr std::chrono::milliseconds kPollPeriod(200);

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

}  // namespace

Launcher::Launcher(LaunchOptions options, RoleBinaries binaries,
                   Console* console)
    : options_(std::move(options)),
      binaries_(std::move(binaries)),
      console_(console) {}

Launcher::~Launcher() {
  for (const std::string& path : ipc_files_) unlink(path.c_str());
}

int Launcher::Run() {
  start_ = std::chrono::steady_clock::now();
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
  Outcome outcome = StartAll();
  while (true) {
    if (outcome == Outcome::kRunning) outcome = RunUntilCoordinatorDone();
    if (outcome != Outcome::kRestart) break;
    outcome = RestartJob();
  }
  if (outcome != Outcome::kRunning) return Abort(outcome);
  AwaitShutdown();
  return Finish();
}

Launcher::Outcome Launcher::RunUntilCoordinatorDone() {
  while (!coordinator_done_) {
    if (Outcome o = Step(); o != Outcome::kRunning) return o;
  }
  return Outcome::kRunning;
}

void Launcher::AwaitShutdown() {
  const auto deadline = std::chrono::steady_clock::now() + kShutdownWait;
  while (group_.running() > 0 && StopSignal() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    HandleEvents(group_.Poll(kPollPeriod));
  }
  if (group_.running() == 0) return;
  std::string labels;
  for (pid_t pid : group_.running_pids()) {
    labels += (labels.empty() ? "" : ", ") + roles_.at(pid).label;
  }
  console_->Message("warning: stopping what did not exit within " +
                    std::to_string(kShutdownWait.count()) +
                    " s after the job ended: " + labels);
  judging_exits_ = false;
  HandleEvents(group_.TerminateAll(kTerminateGrace));
}

Launcher::Outcome Launcher::Step() {
  HandleEvents(group_.Poll(kPollPeriod));
  StartDueRestarts();
  if (!failure_.empty()) return Outcome::kFailed;
  if (resume_job_) return Outcome::kRestart;
  if (StopSignal() != 0) return Outcome::kInterrupted;
  if (options_.timeout_s > 0 && !coordinator_done_ &&
      ElapsedS() > options_.timeout_s) {
    return Outcome::kTimedOut;
  }
  return Outcome::kRunning;
}

void Launcher::HandleEvents(const ChildEvents& events) {
  for (const ChildLine& line : events.lines) {
    auto it = roles_.find(line.pid);
    if (it != roles_.end()) HandleLine(it->second, line);
  }
  for (const ChildExit& exit : events.exits) {
    auto it = roles_.find(exit.pid);
    if (it != roles_.end()) HandleExit(it->second, exit);
  }
}

void Launcher::HandleLine(Role& role, const ChildLine& line) {
  const std::string& text = line.text;
  std::fprintf(role.log.get(), "%s\n", text.c_str());
  std::fflush(role.log.get());
  role.tail.push_back(text);
  if (role.tail.size() > kTailLines) role.tail.pop_front();
  if (line.pid == coordinator_pid_ && !line.from_stderr) {
    if (std::optional<std::string> ep = StripTag(text, "@endpoint")) {
      if (endpoint_.empty() && !ep->empty()) endpoint_ = *ep;
    } else if (StripTag(text, "@progress")) {
      StatusOr<Progress> progress = ParseProgressLine(text);
      if (progress.ok()) {
        console_->ShowProgress(*progress, ElapsedS());
        return;
      }
    } else if (std::optional<std::string> json = StripTag(text, "@summary")) {
      summary_json_ = *json;
      return;
    }
  }
  console_->RoleLine(role.label, text, line.from_stderr);
}

void Launcher::HandleExit(Role& role, const ChildExit& exit) {
  const std::string what = role.label + " (pid " + std::to_string(exit.pid) +
                           ") " + exit.how.ToString();
  std::fprintf(role.log.get(), "# lockstep-launch: %s\n", what.c_str());
  std::fflush(role.log.get());
  RemoveWorkerCpuQuotaGroup(role, exit.pid);
  if (!judging_exits_) return;
  const bool is_coordinator = exit.pid == coordinator_pid_;
  if (coordinator_done_) {
    if (!exit.how.ok()) {
      console_->Message("warning: " + what + " after the job ended");
    }
  } else if (is_coordinator && exit.how.ok()) {
    coordinator_done_ = true;
  } else if (options_.supervise && !exit.how.ok()) {
    if (is_coordinator) {
      ScheduleJobRestart(role, what);
    } else {
      ScheduleRestart(role, what);
    }
  } else if (role.role == "worker" && !exit.how.ok() &&
             !options_.stop_on_worker_failure) {
    WorkerFailed(role, what);
  } else if (role.role == "evaluator" && !exit.how.ok()) {
    // Training does not depend on it: the coordinator goes on without.
    console_->Message(what + "; training goes on without evaluations");
  } else if (is_coordinator || !exit.how.ok()) {
    Fail(what, &role);
  } else if (console_->verbose()) {
    // Normal when the coordinator's Shutdown reaches a role before the
    // coordinator itself exits; a role leaving early is its to judge.
    console_->Message(what);
  }
}

void Launcher::WorkerFailed(const Role& role, const std::string& what) {
  ++workers_failed_;
  if (workers_failed_ < options_.job.workers) {
    console_->Message(what + "; the job goes on with the other workers");
    return;
  }
  // No worker is left and the launcher starts none: the job cannot end.
  Fail(what + "; every worker has failed, so the job cannot go on", &role);
}

void Launcher::RemoveWorkerCpuQuotaGroup(const Role& role, pid_t pid) const {
  if (role.role != "worker") return;
  const auto profile = options_.hetero_profiles.find(role.rank);
  if (profile == options_.hetero_profiles.end() ||
      profile->second.find("cpu=") == std::string::npos) {
    return;
  }
  // Best effort: it exists only if the worker could apply its quota.
  rmdir(WorkerCpuQuotaGroupPath(pid).c_str());
}

void Launcher::Fail(const std::string& reason, const Role* role) {
  if (!failure_.empty()) return;  // the first failure is the cause
  failure_ = reason;
  failed_role_ = role;
}

int Launcher::Abort(Outcome outcome) {
  console_->FinishProgress();
  const std::string stopping =
      "stopping " + std::to_string(group_.running()) + " processes";
  switch (outcome) {
    case Outcome::kFailed:
      console_->Message(failure_);
      break;
    case Outcome::kTimedOut:
      console_->Message("the job ran longer than --timeout-s " +
                        Seconds(options_.timeout_s) + "; " + stopping);
      break;
    default:
      console_->Message("interrupted (" + SignalName(StopSignal()) + "); " +
                        stopping);
      break;
  }
  judging_exits_ = false;
  HandleEvents(group_.TerminateAll(kTerminateGrace));
  if (failed_role_ != nullptr) {
    console_->ErrorLine("last lines of " + failed_role_->label + " (" +
                        failed_role_->log_path + "):");
    for (const std::string& line : failed_role_->tail) {
      console_->ErrorLine("  " + line);
    }
  }
  console_->Message("run dir: " + run_dir_);
  switch (outcome) {
    case Outcome::kFailed:
      return 1;
    case Outcome::kTimedOut:
      return 124;
    default:
      return 130;
  }
}

int Launcher::Finish() {
  console_->FinishProgress();
  if (workers_failed_ > 0) {
    console_->Message("warning: " + std::to_string(workers_failed_) + " of " +
                      std::to_string(options_.job.workers) +
                      " workers failed during the job (see " + run_dir_ +
                      "/logs)");
  }
  if (summary_json_.empty()) {
    console_->Message("warning: the coordinator printed no @summary line");
  } else {
    console_->Print("done: " + FormatSummary(summary_json_));
  }
  console_->Print("run dir: " + run_dir_);
  return 0;
}

double Launcher::ElapsedS() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start_)
      .count();
}

}  // namespace lockstep
