// Launcher: --supervise. A failed server or worker is started again after
// a backoff; a failed coordinator takes the job with it (the model's
// timeline is the coordinator's), so every role is stopped and the job is
// started again from its newest complete snapshot round (--resume).
#include <algorithm>
#include <thread>

#include "coordinator/snapshot_manifest.h"
#include "tools/launch/launcher.h"

namespace lockstep {
namespace {

// A role that ran this long before it failed restarts like a first time.
constexpr auto kStableRun = std::chrono::seconds(60);

// 0.5 s before the first restart of a role, doubling up to 10 s.
double RestartDelayS(uint32_t restart) {
  return std::min(10.0,
                  0.5 * static_cast<double>(1u << std::min(restart - 1, 5u)));
}

}  // namespace

std::optional<std::string> Launcher::TakeRestart(const Role& role,
                                                 const std::string& what) {
  uint32_t& count = restart_counts_[role.label];
  if (std::chrono::steady_clock::now() - role.started >= kStableRun) count = 0;
  if (count >= options_.max_restarts) {
    Fail(what + "; restarted " + std::to_string(count) +
             " times already (--max-restarts)",
         &role);
    return std::nullopt;
  }
  ++count;
  return " in " + std::to_string(RestartDelayS(count)).substr(0, 3) +
         " s (restart " + std::to_string(count) + " of at most " +
         std::to_string(options_.max_restarts) + ")";
}

bool Launcher::ScheduleRestart(const Role& role, const std::string& what) {
  const std::optional<std::string> when = TakeRestart(role, what);
  if (!when) return false;
  const double delay_s = RestartDelayS(restart_counts_[role.label]);
  restarts_.push_back(
      {role.role, role.rank,
       std::chrono::steady_clock::now() +
           std::chrono::milliseconds(static_cast<int64_t>(delay_s * 1000))});
  console_->Message(what + "; restarting it" + *when);
  return true;
}

void Launcher::StartDueRestarts() {
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < restarts_.size();) {
    if (restarts_[i].at > now || coordinator_done_) {
      ++i;
      continue;
    }
    const Restart due = restarts_[i];
    restarts_.erase(restarts_.begin() + static_cast<std::ptrdiff_t>(i));
    if (Status s = StartRole(due.role, due.rank, PeerArgv(due.role, due.rank));
        !s.ok()) {
      Fail(s.message(), nullptr);
    }
  }
}

bool Launcher::ScheduleJobRestart(const Role& role, const std::string& what) {
  const JobConfig& job = options_.job;
  const ManifestRound* round = nullptr;
  StatusOr<SnapshotManifest> manifest = NotFound("no snapshots");
  if (!job.snapshot_dir.empty()) {
    manifest = SnapshotManifest::Load(job.snapshot_dir);
    if (manifest.ok()) round = manifest->LatestComplete();
  }
  if (round == nullptr) {
    Fail(what + (!job.snapshot_dir.empty()
                     ? "; no snapshot round is complete yet, so the job "
                       "cannot be resumed"
                     : "; the job takes no snapshots "
                       "(--snapshot-every-clocks), so it cannot be resumed"),
         &role);
    return false;
  }
  const std::optional<std::string> when = TakeRestart(role, what);
  if (!when) return false;
  resume_job_ = manifest->job();
  console_->Message(what + "; stopping every role and resuming the job from " +
                    "snapshot round " + std::to_string(round->round) +
                    " (clock " + std::to_string(round->clock) + ")" + *when);
  return true;
}

Launcher::Outcome Launcher::RestartJob() {
  judging_exits_ = false;
  HandleEvents(group_.TerminateAll(kTerminateGrace));
  judging_exits_ = true;
  options_.job = *resume_job_;
  options_.resume = true;
  resume_job_.reset();
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(static_cast<int64_t>(
                         RestartDelayS(restart_counts_["coordinator"]) * 1000));
  while (std::chrono::steady_clock::now() < until) {
    if (Outcome o = Step(); o != Outcome::kRunning) return o;
  }
  restarts_.clear();
  endpoint_.clear();
  return StartAll();
}

}  // namespace lockstep
