#include "coordinator/job_metrics.h"

#include <algorithm>

#include "coordinator/metric_families.h"

namespace lockstep {

std::string JobMetrics::Exposition(uint64_t bad_messages) const {
  PrometheusText text;
  recorder_.AddMetrics(&text);
  auto line = [&](const std::string& name, double v) { text.Add(name, v); };
  line("lockstep_live_workers",
       static_cast<double>(members_.worker_ids().size()));
  line("lockstep_dead_workers_total",
       static_cast<double>(enrollment_.dead_workers()));
  line("lockstep_recoveries_total",
       static_cast<double>(recovery_.recoveries()));
  line("lockstep_bad_messages_total", static_cast<double>(bad_messages));
  line("lockstep_policy_decision_seconds_total", clock_.policy_seconds());
  line("lockstep_snapshot_rounds_total{result=\"complete\"}",
       static_cast<double>(rounds_.complete()));
  line("lockstep_snapshot_rounds_total{result=\"failed\"}",
       static_cast<double>(rounds_.failed()));
  refusals_.AddMetrics(&text);
  access_.AddMetrics(&text);
  // The policy's own figures last: a series the coordinator publishes
  // itself (the live workers, the dropped pushes) is the coordinator's.
  for (const auto& [name, value] : clock_.policy().Metrics()) {
    line(name, value);
  }
  return text.Text(DescribeJobMetric);
}

std::map<std::string, double> JobMetrics::SummaryFields(
    uint64_t bad_messages) const {
  const double policy_s = clock_.policy_seconds();
  return {
      {"bad_messages", static_cast<double>(bad_messages)},
      {"dead_workers", static_cast<double>(enrollment_.dead_workers())},
      {"recoveries", static_cast<double>(recovery_.recoveries())},
      {"rejected_pushes", static_cast<double>(refusals_.total())},
      {"poisoning_workers_removed", static_cast<double>(refusals_.removed())},
      {"unauthorized_requests", static_cast<double>(access_.unauthorized())},
      {"refused_connections",
       static_cast<double>(access_.RefusedConnections())},
      {"snapshot_rounds_complete", static_cast<double>(rounds_.complete())},
      {"snapshot_rounds_failed", static_cast<double>(rounds_.failed())},
      {"policy_decision_s", policy_s},
      {"policy_overhead_share",
       policy_s / std::max(1e-9, recorder_.WallSeconds())}};
}

}  // namespace lockstep
