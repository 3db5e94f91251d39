#include "sync_policies/bsp_policy.h"

#include <algorithm>
#include <utility>

namespace lockstep {

BspPolicy::BspPolicy(std::vector<uint32_t> batches)
    : batches_(std::move(batches)) {}

void BspPolicy::OnWorkerJoined(uint32_t worker, int64_t clock,
                               const WorkerCaps& /*caps*/) {
  int64_t at = std::max(clock, committed_ + 1);
  // The clock under way has no slice of its batch for a newcomer.
  if (!plan_.Includes(at, worker)) ++at;
  live_[worker] = at;
}

std::vector<CommitDecision> BspPolicy::OnWorkerLeft(uint32_t worker) {
  live_.erase(worker);
  plan_.Leave(worker);
  // Its reports no longer count: if it re-joins at a clock it had
  // reported, it must report that clock again.
  for (auto& [clock, done] : reported_) done.erase(worker);
  return CommitReady();
}

uint32_t BspPolicy::QuotaOf(uint32_t worker, int64_t /*clock*/) const {
  if (batches_.empty()) return 0;
  return batches_[std::min<size_t>(worker, batches_.size() - 1)];
}

std::optional<AdmissionDecision> BspPolicy::Admit(uint32_t worker,
                                                  int64_t clock) {
  auto it = live_.find(worker);
  if (it == live_.end() || clock > committed_ + 1) return std::nullopt;
  AdmissionDecision d;
  d.clock = committed_ + 1;  // an old request jumps to the current clock
  if (it->second > d.clock) return std::nullopt;  // joined for a later one
  BatchPlan::Members members;
  for (const auto& [w, joined] : live_) {
    if (joined <= d.clock) members.emplace_back(w, QuotaOf(w, d.clock));
  }
  const std::optional<uint64_t> offset = plan_.Admit(d.clock, worker, members);
  if (!offset.has_value()) {
    it->second = d.clock + 1;  // no slice in this clock: the next one
    return std::nullopt;
  }
  d.batch = QuotaOf(worker, d.clock);
  d.batch_offset = *offset;
  return d;
}

std::vector<CommitDecision> BspPolicy::OnClockDone(const ClockReport& report) {
  if (report.clock <= committed_ || live_.count(report.worker) == 0) {
    return {};  // a duplicate, late or departed report
  }
  reported_[report.clock].insert(report.worker);
  return CommitReady();
}

std::vector<CommitDecision> BspPolicy::CommitReady() {
  std::vector<CommitDecision> out;
  while (!live_.empty()) {
    const int64_t clock = committed_ + 1;
    const std::set<uint32_t>& done = reported_[clock];
    bool all = true;
    for (const auto& [w, joined] : live_) {
      if (joined <= clock && done.count(w) == 0) all = false;
    }
    if (!all || done.empty()) break;
    CommitDecision decision;
    decision.clock = clock;
    // Pushes from workers that reported and are still live count.
    for (uint32_t w : done) {
      if (live_.count(w) != 0) decision.workers.push_back(w);
    }
    committed_ = clock;
    reported_.erase(clock);
    OnCommitted(clock);
    out.push_back(std::move(decision));
  }
  return out;
}

std::map<std::string, double> BspPolicy::Metrics() const {
  std::map<std::string, double> m;
  m["lockstep_committed_clock"] = static_cast<double>(committed_);
  m["lockstep_live_workers"] = static_cast<double>(live_.size());
  for (const auto& [w, joined] : live_) {
    m["lockstep_quota{worker=\"" + std::to_string(w) + "\"}"] =
        QuotaOf(w, committed_ + 1);
  }
  return m;
}

StatusOr<std::unique_ptr<SyncPolicy>> BspPolicy::Create(const PolicySpec& spec,
                                                        const PolicyJob& job) {
  LS_RETURN_IF_ERROR(spec.ExpectNoParams());
  return std::unique_ptr<SyncPolicy>(new BspPolicy(job.batches));
}

}  // namespace lockstep
