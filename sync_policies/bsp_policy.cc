#include "sync_policies/bsp_policy.h"

#include <algorithm>
#include <utility>

namespace lockstep {

BspPolicy::BspPolicy(std::vector<uint32_t> batches)
    : batches_(std::move(batches)) {}

void BspPolicy::OnWorkerJoined(uint32_t worker, int64_t /*clock*/) {
  live_.insert(worker);
}

std::vector<CommitDecision> BspPolicy::OnWorkerLeft(uint32_t worker) {
  live_.erase(worker);
  return CommitReady();
}

bool BspPolicy::MayStart(uint32_t /*worker*/, int64_t clock) const {
  return clock <= committed_ + 1;
}

uint32_t BspPolicy::BatchQuota(uint32_t worker, int64_t /*clock*/) {
  if (batches_.empty()) return 0;
  return batches_[std::min<size_t>(worker, batches_.size() - 1)];
}

std::vector<CommitDecision> BspPolicy::OnClockDone(const ClockReport& report) {
  if (report.clock <= committed_) return {};  // a duplicate or late report
  reported_[report.clock].insert(report.worker);
  return CommitReady();
}

std::vector<CommitDecision> BspPolicy::CommitReady() {
  std::vector<CommitDecision> out;
  while (!live_.empty()) {
    auto it = reported_.find(committed_ + 1);
    if (it == reported_.end()) break;
    const auto& done = it->second;
    const bool all =
        std::includes(done.begin(), done.end(), live_.begin(), live_.end());
    if (!all) break;
    CommitDecision decision;
    decision.clock = it->first;
    // Pushes from workers that reported and are still live count.
    for (uint32_t w : done) {
      if (live_.count(w) != 0) decision.workers.push_back(w);
    }
    committed_ = it->first;
    reported_.erase(it);
    out.push_back(std::move(decision));
  }
  return out;
}

}  // namespace lockstep
