#include "sync_policies/on_arrival_policy.h"

#include <algorithm>

#include "sync_policies/configured_batches.h"

namespace lockstep {

void OnArrivalPolicy::OnWorkerJoined(uint32_t worker, int64_t clock,
                                     const WorkerCaps& /*caps*/) {
  table_.Join(worker, std::max(clock, CurrentClock()));
}

std::vector<CommitDecision> OnArrivalPolicy::OnWorkerLeft(uint32_t worker) {
  table_.Leave(worker);
  return {};
}

std::vector<CommitDecision> OnArrivalPolicy::OnClockDone(
    const ClockReport& report) {
  table_.Report(report.worker, report.clock);
  return {};
}

std::map<std::string, double> OnArrivalPolicy::Metrics() const {
  std::map<std::string, double> m;
  table_.AddMetrics(&m);
  return m;
}

AdmissionDecision OnArrivalPolicy::AdmitTo(uint32_t worker, int64_t clock) {
  table_.Admitted(worker, clock);
  AdmissionDecision decision;
  decision.clock = clock;
  decision.batch = ConfiguredBatch(batches_, worker);
  decision.batch_offset = RankOffset(batches_, worker);
  return decision;
}

}  // namespace lockstep
