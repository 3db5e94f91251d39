#include "tools/launch/job_monitor.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

#include "common/termination.h"
#include "tools/launch/hetero_spec.h"
#include "tools/launch/progress.h"
#include "tools/launch/stop_signal.h"

namespace lockstep {
namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

}  // namespace

ExitVerdict JudgeExit(const std::string& role, bool is_coordinator,
                      const ExitInfo& exit, const ExitRules& rules) {
  const bool ok = exit.ok();
  // The rules in order of precedence: once the coordinator is done the
  // job's result stands whatever exits; --supervise restarts before any
  // failure is judged; a worker or the evaluator failing is survivable
  // unless --stop-on-worker-failure; anything else failing fails the job.
  if (!rules.judging) return ExitVerdict::kIgnored;
  if (rules.coordinator_done) {
    return ok ? ExitVerdict::kIgnored : ExitVerdict::kFailedAfterTheEnd;
  }
  if (is_coordinator && ok) return ExitVerdict::kJobDone;
  if (!is_coordinator && !exit.signaled && exit.code == kExitJobAborted) {
    return ExitVerdict::kLeftEarly;
  }
  // Its machine lacks its device: started again it would fail again.
  const bool no_device = !exit.signaled && exit.code == kExitDeviceUnavailable;
  if (no_device && role == "worker") {
    return rules.stop_on_worker_failure ? ExitVerdict::kJobFails
                                        : ExitVerdict::kWorkerLost;
  }
  if (no_device && role == "evaluator") return ExitVerdict::kEvaluatorLost;
  if (rules.supervise && !ok) {
    return is_coordinator ? ExitVerdict::kRestartJob
                          : ExitVerdict::kRestartRole;
  }
  if (role == "worker" && !ok && !rules.stop_on_worker_failure) {
    return ExitVerdict::kWorkerLost;
  }
  if (role == "evaluator" && !ok) return ExitVerdict::kEvaluatorLost;
  if (is_coordinator || !ok) return ExitVerdict::kJobFails;
  return ExitVerdict::kLeftEarly;
}

JobMonitor::JobMonitor(const LaunchOptions& options, Console* console,
                       RoleProcesses* roles, Supervisor* supervisor)
    : options_(options),
      console_(console),
      roles_(roles),
      supervisor_(supervisor) {}

double JobMonitor::ElapsedS() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start_)
      .count();
}

void JobMonitor::Handle(const ChildEvents& events) {
  for (const ChildLine& line : events.lines) {
    if (RoleProcess* role = roles_->Find(line.pid)) HandleLine(*role, line);
  }
  for (const ChildExit& exit : events.exits) {
    if (RoleProcess* role = roles_->Find(exit.pid)) HandleExit(*role, exit);
  }
}

void JobMonitor::HandleLine(RoleProcess& role, const ChildLine& line) {
  const std::string& text = line.text;
  RoleProcesses::RecordLine(role, text);
  // Tagged lines count only on the current coordinator's stdout. A
  // @progress line that does not parse goes on as an ordinary role line.
  if (line.pid == roles_->coordinator_pid() && !line.from_stderr) {
    if (std::optional<std::string> ep = StripTag(text, "@endpoint")) {
      // The first one counts; ClearEndpoint forgets it when a restarted
      // job's coordinator is about to print its own.
      if (endpoint_.empty() && !ep->empty()) endpoint_ = *ep;
    } else if (std::optional<std::string> url = StripTag(text, "@metrics")) {
      // Said once a job (a restarted coordinator serves it again).
      if (url->empty() || *url == metrics_url_) return;
      metrics_url_ = *url;
      console_->Message("metrics at " + metrics_url_ +
                        " (also in the run directory's metrics_url)");
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

void JobMonitor::HandleExit(RoleProcess& role, const ChildExit& exit) {
  const std::string what = role.label + " (pid " + std::to_string(exit.pid) +
                           ") " + exit.how.ToString();
  RoleProcesses::RecordNote(role, what);
  // Whatever the verdict: the group is named by the pid that just exited,
  // so a restarted worker makes a new one.
  RemoveWorkerCpuQuotaGroup(role, exit.pid);
  const ExitRules rules{judging_exits_, coordinator_done_, options_.supervise,
                        options_.stop_on_worker_failure};
  const bool is_coordinator = exit.pid == roles_->coordinator_pid();
  const auto now = std::chrono::steady_clock::now();
  switch (JudgeExit(role.role, is_coordinator, exit.how, rules)) {
    case ExitVerdict::kIgnored:
      break;
    case ExitVerdict::kFailedAfterTheEnd:
      console_->Message("warning: " + what + " after the job ended");
      break;
    case ExitVerdict::kJobDone:
      // The job's result is the coordinator's now: the other roles exit on
      // its Shutdown, and their exits decide nothing (a warning at most).
      coordinator_done_ = true;
      break;
    case ExitVerdict::kRestartJob:
      Apply(supervisor_->RestartJob(role, what, options_.job.snapshot_dir, now,
                                    &resume_job_, RolesReattach()),
            role);
      break;
    case ExitVerdict::kRestartRole:
      Apply(supervisor_->RestartRole(role, what, now), role);
      break;
    case ExitVerdict::kWorkerLost:
      WorkerFailed(role, what);
      break;
    case ExitVerdict::kEvaluatorLost:
      // Training does not depend on it: the coordinator goes on without.
      console_->Message(what + "; training goes on without evaluations");
      break;
    case ExitVerdict::kJobFails:
      Fail(what, &role);
      break;
    case ExitVerdict::kLeftEarly:
      // Normal when the coordinator's Shutdown reaches a role before the
      // coordinator itself exits; a role leaving early is its to judge.
      if (console_->verbose()) console_->Message(what);
      break;
  }
}

void JobMonitor::Apply(const Supervisor::Decision& decision,
                       const RoleProcess& role) {
  if (decision.restart) {
    console_->Message(decision.message);
  } else {
    Fail(decision.message, &role);
  }
}

void JobMonitor::WorkerFailed(const RoleProcess& role,
                              const std::string& what) {
  // Counted against the job's worker count, not the workers alive: the
  // launcher starts no replacement without --supervise, whose failures
  // never come here.
  ++workers_failed_;
  if (workers_failed_ < options_.job.workers) {
    console_->Message(what + "; the job goes on with the other workers");
    return;
  }
  // No worker is left and the launcher starts none: the job cannot end.
  Fail(what + "; every worker has failed, so the job cannot go on", &role);
}

void JobMonitor::RemoveWorkerCpuQuotaGroup(const RoleProcess& role,
                                           pid_t pid) const {
  if (role.role != "worker") return;
  const auto profile = options_.hetero_profiles.find(role.rank);
  if (profile == options_.hetero_profiles.end() ||
      profile->second.find("cpu=") == std::string::npos) {
    return;
  }
  // Best effort: it exists only if the worker could apply its quota.
  rmdir(WorkerCpuQuotaGroupPath(pid).c_str());
}

void JobMonitor::Fail(const std::string& reason, const RoleProcess* role) {
  if (!failure_.empty()) return;  // the first failure is the cause
  failure_ = reason;
  failed_role_ = role;
}

JobOutcome JobMonitor::State() const {
  // In this order, so a job that failed is reported as failed even when a
  // stop signal or the timeout came after the failure.
  if (!failure_.empty()) return JobOutcome::kFailed;
  if (resume_job_) return JobOutcome::kRestart;
  if (StopSignal() != 0) return JobOutcome::kInterrupted;
  if (options_.timeout_s > 0 && !coordinator_done_ &&
      ElapsedS() > options_.timeout_s) {
    return JobOutcome::kTimedOut;
  }
  return JobOutcome::kRunning;
}

JobConfig JobMonitor::TakeResumeJob() {
  JobConfig job = std::move(*resume_job_);
  resume_job_.reset();
  return job;
}

void JobMonitor::ReportStopping(JobOutcome outcome, size_t processes) {
  console_->FinishProgress();
  const std::string stopping =
      "stopping " + std::to_string(processes) + " processes";
  switch (outcome) {
    case JobOutcome::kFailed:
      console_->Message(failure_);
      break;
    case JobOutcome::kTimedOut:
      console_->Message("the job ran longer than --timeout-s " +
                        Seconds(options_.timeout_s) + "; " + stopping);
      break;
    default:
      console_->Message("interrupted (" + SignalName(StopSignal()) + "); " +
                        stopping);
      break;
  }
}

void JobMonitor::ReportStopped(const std::string& run_dir) {
  if (failed_role_ != nullptr) {
    console_->ErrorLine("last lines of " + failed_role_->label + " (" +
                        failed_role_->log_path + "):");
    for (const std::string& line : failed_role_->tail) {
      console_->ErrorLine("  " + line);
    }
  }
  console_->Message("run dir: " + run_dir);
}

void JobMonitor::ReportDone(const std::string& run_dir) {
  console_->FinishProgress();
  if (workers_failed_ > 0) {
    console_->Message("warning: " + std::to_string(workers_failed_) + " of " +
                      std::to_string(options_.job.workers) +
                      " workers failed during the job (see " + run_dir +
                      "/logs)");
  }
  if (summary_json_.empty()) {
    console_->Message("warning: the coordinator printed no @summary line");
  } else {
    console_->Print("done: " + FormatSummary(summary_json_));
  }
  console_->Print("run dir: " + run_dir);
}

int JobMonitor::ExitCode(JobOutcome outcome) {
  switch (outcome) {
    case JobOutcome::kFailed:
      return 1;
    case JobOutcome::kTimedOut:
      return 124;
    default:
      return 130;
  }
}

}  // namespace lockstep
