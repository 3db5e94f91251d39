#include "tools/launch/role_processes.h"

#include <ctime>
#include <utility>

#include "tools/launch/run_dir.h"

namespace lockstep {

std::string RoleLabel(const std::string& role, int rank) {
  return role == "coordinator" || role == "evaluator"
             ? role
             : role + " " + std::to_string(rank);
}

RoleProcesses::RoleProcesses(Console* console, bool verbose)
    : console_(console), verbose_(verbose) {}

Status RoleProcesses::Start(const std::string& run_dir, const std::string& role,
                            int rank, const std::vector<std::string>& argv) {
  RoleProcess r;
  r.role = role;
  r.rank = rank;
  r.label = RoleLabel(role, rank);
  r.log_path = RoleLogPath(run_dir, role, rank);
  // A restarted role, and a resumed run's, appends to its log, each start
  // noted in it. The log is opened before the process starts, so a role
  // whose log cannot be written never runs; "e" (close-on-exec) keeps
  // every log out of the children started later.
  r.log.reset(std::fopen(r.log_path.c_str(), "ae"));
  if (!r.log) return IOError("cannot create " + r.log_path);
  LS_ASSIGN_OR_RETURN(const pid_t pid, group_.Spawn(argv, r.label));
  RecordNote(r, "started " + r.label + " (pid " + std::to_string(pid) +
                    ") at " + UtcTimestamp(std::time(nullptr)));
  if (verbose_) {
    console_->Message("started " + r.label + " (pid " + std::to_string(pid) +
                      ")");
  }
  // A restarted job's new coordinator replaces the old one: its lines are
  // the ones read for tags (JobMonitor::HandleLine).
  if (role == "coordinator") coordinator_pid_ = pid;
  roles_.emplace(pid, std::move(r));
  return Status::Ok();
}

RoleProcess* RoleProcesses::Find(pid_t pid) {
  auto it = roles_.find(pid);
  return it == roles_.end() ? nullptr : &it->second;
}

void RoleProcesses::RecordLine(RoleProcess& role, const std::string& text) {
  // Flushed per line: the log is complete up to the last line even if the
  // launcher itself is killed, and can be followed while the job runs.
  std::fprintf(role.log.get(), "%s\n", text.c_str());
  std::fflush(role.log.get());
  role.tail.push_back(text);
  if (role.tail.size() > kTailLines) role.tail.pop_front();
}

void RoleProcesses::RecordNote(RoleProcess& role, const std::string& text) {
  std::fprintf(role.log.get(), "# lockstep-launch: %s\n", text.c_str());
  std::fflush(role.log.get());
}

ChildEvents RoleProcesses::Poll(std::chrono::milliseconds timeout) {
  return group_.Poll(timeout);
}

ChildEvents RoleProcesses::TerminateAll(std::chrono::milliseconds grace) {
  return group_.TerminateAll(grace);
}

std::string RoleProcesses::RunningLabels() const {
  std::string labels;
  for (pid_t pid : group_.running_pids()) {
    labels += (labels.empty() ? "" : ", ") + roles_.at(pid).label;
  }
  return labels;
}

}  // namespace lockstep
