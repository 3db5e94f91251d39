#include "sync_policies/ssp_policy.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace lockstep {

SspPolicy::SspPolicy(std::vector<uint32_t> batches, int64_t staleness)
    : OnArrivalPolicy(std::move(batches)), staleness_(staleness) {
  assert(staleness >= 0);
}

std::string SspPolicy::name() const {
  return "ssp:" + std::to_string(staleness_);
}

void SspPolicy::OnWorkerJoined(uint32_t worker, int64_t clock,
                               const WorkerCaps& caps) {
  OnArrivalPolicy::OnWorkerJoined(worker, clock, caps);
  deferred_.erase(worker);
}

std::vector<CommitDecision> SspPolicy::OnWorkerLeft(uint32_t worker) {
  deferred_.erase(worker);
  return OnArrivalPolicy::OnWorkerLeft(worker);
}

std::optional<AdmissionDecision> SspPolicy::Admit(uint32_t worker,
                                                  int64_t clock) {
  if (!table_.IsLive(worker)) return std::nullopt;
  const int64_t start = std::max(clock, table_.Completed(worker));
  if (table_.MinCompleted() < start - staleness_) {
    auto [it, fresh] = deferred_.try_emplace(worker, start);
    if (fresh || it->second != start) ++deferrals_;
    it->second = start;
    return std::nullopt;
  }
  deferred_.erase(worker);
  return AdmitTo(worker, start);
}

std::map<std::string, double> SspPolicy::Metrics() const {
  std::map<std::string, double> m = OnArrivalPolicy::Metrics();
  m["lockstep_deferred_admissions_total"] = static_cast<double>(deferrals_);
  m["lockstep_staleness_bound"] = static_cast<double>(staleness_);
  return m;
}

StatusOr<std::unique_ptr<SyncPolicy>> SspPolicy::Create(const PolicySpec& spec,
                                                        const PolicyJob& job) {
  LS_ASSIGN_OR_RETURN(uint64_t staleness, spec.SingleNumber("staleness S"));
  return std::unique_ptr<SyncPolicy>(
      new SspPolicy(job.batches, static_cast<int64_t>(staleness)));
}

}  // namespace lockstep
