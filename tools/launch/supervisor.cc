#include "tools/launch/supervisor.h"

#include <algorithm>
#include <cstdio>

#include "common/coordinator_watch.h"
#include "snapshot_format/snapshot_manifest.h"

namespace lockstep {
namespace {

std::chrono::milliseconds DelayOf(double delay_s) {
  return std::chrono::milliseconds(static_cast<int64_t>(delay_s * 1000));
}

}  // namespace

Supervisor::Supervisor(uint32_t max_restarts) : max_restarts_(max_restarts) {}

double Supervisor::RestartDelayS(uint32_t restart) {
  // The shift stops at 5 (16 s, above the 10 s cap), so it stays defined
  // however high the count.
  return std::min(10.0,
                  0.5 * static_cast<double>(1u << std::min(restart - 1, 5u)));
}

std::optional<std::string> Supervisor::TakeRestart(const RoleProcess& role,
                                                   const std::string& what,
                                                   Clock::time_point now,
                                                   std::string* failure) {
  // By label, so a role's restarts add up across the processes that took
  // its place; its run time is that of the process that just failed.
  uint32_t& count = restart_counts_[role.label];
  if (now - role.started >= kStableRun) count = 0;
  if (count >= max_restarts_) {
    *failure = what + "; restarted " + std::to_string(count) +
               " times already (--max-restarts)";
    return std::nullopt;
  }
  ++count;
  char delay[16];
  std::snprintf(delay, sizeof(delay), "%.1f", RestartDelayS(count));
  return " in " + std::string(delay) + " s (restart " + std::to_string(count) +
         " of at most " + std::to_string(max_restarts_) + ")";
}

Supervisor::Decision Supervisor::RestartRole(const RoleProcess& role,
                                             const std::string& what,
                                             Clock::time_point now) {
  Decision decision;
  const std::optional<std::string> when =
      TakeRestart(role, what, now, &decision.message);
  if (!when) return decision;
  // Not started here: it waits in the pending list, and the launcher,
  // watching the job meanwhile, starts it once the backoff has passed.
  const double delay_s = RestartDelayS(restart_counts_[role.label]);
  pending_.push_back({role.role, role.rank, now + DelayOf(delay_s)});
  decision.restart = true;
  decision.message = what + "; restarting it" + *when;
  return decision;
}

bool RolesReattach() { return CoordinatorWatch("", -1).reattach_s() > 0; }

Supervisor::Decision Supervisor::RestartJob(
    const RoleProcess& role, const std::string& what,
    const std::string& snapshot_dir, Clock::time_point now,
    std::optional<JobConfig>* resume_job, bool roles_reattach) {
  Decision decision;
  const ManifestRound* round = nullptr;
  StatusOr<SnapshotManifest> manifest = NotFound("no snapshots");
  if (!snapshot_dir.empty()) {
    manifest = SnapshotManifest::Load(snapshot_dir);
    if (manifest.ok()) round = manifest->LatestComplete();
  }
  // Checked before a restart is counted: a job that cannot be resumed
  // fails with that reason, not with --max-restarts.
  if (round == nullptr) {
    decision.message =
        what + (!snapshot_dir.empty()
                    ? "; no snapshot round is complete yet, so the job "
                      "cannot be resumed"
                    : "; the job takes no snapshots "
                      "(--snapshot-every-clocks), so it cannot be resumed");
    return decision;
  }
  const std::optional<std::string> when =
      TakeRestart(role, what, now, &decision.message);
  if (!when) return decision;
  *resume_job = manifest->job();
  decision.restart = true;
  decision.message =
      what +
      (roles_reattach
           ? "; restarting the coordinator, which takes the other roles back "
             "and resumes the job from "
           : "; stopping every role and resuming the job from ") +
      "snapshot round " + std::to_string(round->round) + " (clock " +
      std::to_string(round->clock) + ")" + *when;
  return decision;
}

std::vector<Supervisor::PendingRestart> Supervisor::TakeDue(
    Clock::time_point now) {
  // Erased in place, so what stays keeps its order of failure.
  std::vector<PendingRestart> due;
  for (size_t i = 0; i < pending_.size();) {
    if (pending_[i].at > now) {
      ++i;
      continue;
    }
    due.push_back(pending_[i]);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return due;
}

// The coordinator's label stands for the job: RestartJob counted under it.
std::chrono::milliseconds Supervisor::JobRestartDelay() {
  return DelayOf(RestartDelayS(restart_counts_["coordinator"]));
}

}  // namespace lockstep
