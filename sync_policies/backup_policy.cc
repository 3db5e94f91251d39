#include "sync_policies/backup_policy.h"

#include <algorithm>
#include <span>
#include <utility>

#include "sync_policies/bsp_policy.h"
#include "sync_policies/configured_batches.h"

namespace lockstep {

BackupPolicy::BackupPolicy(std::vector<uint32_t> batches, uint32_t backups)
    : batches_(std::move(batches)), backups_(backups) {}

std::string BackupPolicy::name() const {
  return "backup:" + std::to_string(backups_);
}

void BackupPolicy::OnWorkerJoined(uint32_t worker, int64_t clock,
                                  const WorkerCaps& /*caps*/) {
  int64_t at = std::max(clock, CurrentClock());
  // The clock under way has no slice of its batch for a newcomer.
  if (!plan_.Includes(at, worker)) ++at;
  live_[worker] = at;
}

std::vector<CommitDecision> BackupPolicy::OnWorkerLeft(uint32_t worker) {
  live_.erase(worker);
  plan_.Leave(worker);
  // A re-joined worker reports afresh from its join clock on.
  last_report_.erase(worker);
  for (auto& [clock, order] : reporters_) {
    order.erase(std::remove(order.begin(), order.end(), worker), order.end());
  }
  return CommitReady();
}

std::optional<AdmissionDecision> BackupPolicy::Admit(uint32_t worker,
                                                     int64_t clock) {
  auto it = live_.find(worker);
  if (it == live_.end() || clock > committed_ + 1) return std::nullopt;
  AdmissionDecision decision;
  decision.clock = committed_ + 1;
  if (it->second > decision.clock) return std::nullopt;  // joined for later
  BatchPlan::Members members;
  for (const auto& [w, joined] : live_) {
    if (joined <= decision.clock) {
      members.emplace_back(w, ConfiguredBatch(batches_, w));
    }
  }
  const std::optional<uint64_t> offset =
      plan_.Admit(decision.clock, worker, members);
  if (!offset.has_value()) {
    it->second = decision.clock + 1;  // no slice in this clock: the next
    return std::nullopt;
  }
  decision.batch = ConfiguredBatch(batches_, worker);
  decision.batch_offset = *offset;
  return decision;
}

std::vector<CommitDecision> BackupPolicy::OnClockDone(
    const ClockReport& report) {
  const uint32_t w = report.worker;
  auto last = last_report_.find(w);
  if (last != last_report_.end() && report.clock <= last->second) return {};
  last_report_[w] = report.clock;
  if (report.clock <= committed_) {
    CountDrop(w);  // the clock was committed without this worker
    return {};
  }
  if (live_.count(w) == 0) return {};
  reporters_[report.clock].push_back(w);
  return CommitReady();
}

size_t BackupPolicy::NeededFor(int64_t clock) const {
  size_t n = 0;
  for (const auto& [w, joined] : live_) {
    if (joined <= clock) ++n;
  }
  return n > backups_ ? n - backups_ : 1;
}

std::vector<CommitDecision> BackupPolicy::CommitReady() {
  std::vector<CommitDecision> out;
  while (!live_.empty()) {
    const int64_t clock = committed_ + 1;
    auto it = reporters_.find(clock);
    const size_t needed = NeededFor(clock);
    if (it == reporters_.end() || it->second.size() < needed) break;
    CommitDecision decision;
    decision.clock = clock;
    const auto first = std::span(it->second).first(needed);
    decision.workers.assign(first.begin(), first.end());
    // Reports beyond the first `needed` (possible only when reports ran
    // ahead of commits) are as late as any other.
    for (size_t i = needed; i < it->second.size(); ++i) {
      CountDrop(it->second[i]);
    }
    std::sort(decision.workers.begin(), decision.workers.end());
    committed_ = clock;
    reporters_.erase(it);
    out.push_back(std::move(decision));
  }
  return out;
}

void BackupPolicy::CountDrop(uint32_t worker) {
  ++dropped_[worker];
  ++dropped_total_;
}

std::map<std::string, double> BackupPolicy::Metrics() const {
  std::map<std::string, double> m;
  m["lockstep_committed_clock"] = static_cast<double>(committed_);
  m["lockstep_live_workers"] = static_cast<double>(live_.size());
  m["lockstep_backup_workers"] = static_cast<double>(backups_);
  m["lockstep_dropped_pushes_total"] = static_cast<double>(dropped_total_);
  std::map<uint32_t, uint64_t> dropped = dropped_;
  for (const auto& [w, joined] : live_) dropped.try_emplace(w, 0);
  for (const auto& [w, count] : dropped) {
    m["lockstep_worker_dropped_pushes_total{worker=\"" + std::to_string(w) +
      "\"}"] = static_cast<double>(count);
  }
  for (const auto& [w, joined] : live_) {
    m["lockstep_quota{worker=\"" + std::to_string(w) + "\"}"] =
        ConfiguredBatch(batches_, w);
  }
  return m;
}

StatusOr<std::unique_ptr<SyncPolicy>> BackupPolicy::Create(
    const PolicySpec& spec, const PolicyJob& job) {
  LS_ASSIGN_OR_RETURN(uint64_t backups, spec.SingleNumber("backup count B"));
  if (backups >= job.workers) {
    return spec.Error("B=" + std::to_string(backups) +
                      " backup workers need more than B workers (the job has " +
                      std::to_string(job.workers) + ")");
  }
  return std::unique_ptr<SyncPolicy>(
      new BackupPolicy(job.batches, static_cast<uint32_t>(backups)));
}

}  // namespace lockstep
