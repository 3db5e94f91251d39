#include "sync_policies/ssp_policy.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "sync_policies/configured_batches.h"

namespace lockstep {

SspPolicy::SspPolicy(std::vector<uint32_t> batches, int64_t staleness)
    : batches_(std::move(batches)), staleness_(staleness) {
  assert(staleness >= 0);
}

std::string SspPolicy::name() const {
  return "ssp:" + std::to_string(staleness_);
}

void SspPolicy::OnWorkerJoined(uint32_t worker, int64_t clock,
                               const WorkerCaps& /*caps*/) {
  table_.Join(worker, std::max(clock, CurrentClock()));
  deferred_.erase(worker);
}

std::vector<CommitDecision> SspPolicy::OnWorkerLeft(uint32_t worker) {
  table_.Leave(worker);
  deferred_.erase(worker);
  return {};
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
  table_.Admitted(worker, start);
  AdmissionDecision decision;
  decision.clock = start;
  decision.batch = ConfiguredBatch(batches_, worker);
  decision.batch_offset = RankOffset(batches_, worker);
  return decision;
}

std::vector<CommitDecision> SspPolicy::OnClockDone(const ClockReport& report) {
  table_.Report(report.worker, report.clock);
  return {};
}

std::map<std::string, double> SspPolicy::Metrics() const {
  std::map<std::string, double> m;
  table_.AddMetrics(&m);
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
