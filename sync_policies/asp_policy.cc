#include "sync_policies/asp_policy.h"

#include <algorithm>
#include <utility>

#include "sync_policies/configured_batches.h"

namespace lockstep {

AspPolicy::AspPolicy(std::vector<uint32_t> batches, StalenessRule rule)
    : batches_(std::move(batches)), rule_(rule) {}

std::string AspPolicy::name() const {
  std::string name = "asp";
  if (rule_.scale_lr) name += ":scale";
  if (rule_.max_staleness >= 0) {
    name += ":drop=" + std::to_string(rule_.max_staleness);
  }
  return name;
}

void AspPolicy::OnWorkerJoined(uint32_t worker, int64_t clock,
                               const WorkerCaps& /*caps*/) {
  table_.Join(worker, std::max(clock, CurrentClock()));
}

std::vector<CommitDecision> AspPolicy::OnWorkerLeft(uint32_t worker) {
  table_.Leave(worker);
  return {};
}

std::optional<AdmissionDecision> AspPolicy::Admit(uint32_t worker,
                                                  int64_t clock) {
  AdmissionDecision decision;
  decision.clock = clock;
  if (table_.IsLive(worker)) {
    decision.clock = std::max(clock, table_.Completed(worker));
    table_.Admitted(worker, decision.clock);
  }
  decision.batch = ConfiguredBatch(batches_, worker);
  decision.batch_offset =
      ConfiguredOffset(batches_, table_.LiveWorkers(), worker);
  return decision;
}

std::vector<CommitDecision> AspPolicy::OnClockDone(const ClockReport& report) {
  table_.Report(report.worker, report.clock);
  return {};
}

std::map<std::string, double> AspPolicy::Metrics() const {
  std::map<std::string, double> m;
  table_.AddMetrics(&m);
  m["lockstep_asp_scale_lr"] = rule_.scale_lr ? 1 : 0;
  m["lockstep_asp_max_staleness"] = static_cast<double>(rule_.max_staleness);
  return m;
}

}  // namespace lockstep
