#include "coordinator/metric_families.h"

#include "common/http/prometheus_text.h"
#include "sync_policies/policy_metric_families.h"

namespace lockstep {

const std::vector<MetricFamily>& JobMetricFamilies() {
  static const auto* families = new std::vector<MetricFamily>{
      {"lockstep_clock", "gauge", "Clocks committed so far"},
      {"lockstep_samples_total", "counter",
       "Training samples processed since the job began"},
      {"lockstep_wall_seconds", "gauge",
       "Seconds of training since the job began (0 before it starts; a "
       "resumed job counts on from its round)"},
      {"lockstep_train_loss", "gauge",
       "Training loss, smoothed over committed clocks"},
      {"lockstep_test_accuracy", "gauge",
       "Test accuracy at the newest evaluation point"},
      {"lockstep_dropped_pushes_total", "counter",
       "Pushes a shard dropped (too late or too stale for the policy)"},
      {"lockstep_wait_seconds_total", "counter",
       "Seconds the worker waited for admission and replies"},
      {"lockstep_staleness", "histogram",
       "Staleness of applied pushes, in clocks (on-arrival policies)"},
      {"lockstep_live_workers", "gauge",
       "Workers registered with the coordinator"},
      {"lockstep_dead_workers_total", "counter",
       "Workers removed: dead, refused or replaced"},
      {"lockstep_recoveries_total", "counter",
       "Rollbacks of every shard to a snapshot round"},
      {"lockstep_bad_messages_total", "counter",
       "Messages the coordinator refused as malformed or unexpected"},
      {"lockstep_policy_decision_seconds_total", "counter",
       "Seconds the sync policy spent deciding"},
      {"lockstep_snapshot_rounds_total", "counter",
       "Snapshot rounds by result (complete, failed)"},
      {"lockstep_rejected_pushes_total", "counter",
       "Pushes a shard refused (not finite, above --max-grad-norm or the "
       "outlier bound, or claiming more than admitted)"},
      {"lockstep_poisoning_workers_removed_total", "counter",
       "Workers removed for --max-refused-pushes refused pushes in a row"},
      {"lockstep_banned_credentials", "gauge",
       "Worker credentials removed for their pushes, refused if they "
       "register again"},
      {"lockstep_refused_registrations_total", "counter",
       "Registrations refused, by reason (banned_credential)"},
      {"lockstep_unauthorized_requests_total", "counter",
       "Requests from a key whose role may not make them"},
      {"lockstep_refused_connections_total", "counter",
       "Connections refused at their handshake (a key not the job's, "
       "another job's keys, or no CurveZMQ)"},
  };
  return *families;
}

const MetricFamily* DescribeJobMetric(std::string_view name) {
  for (const MetricFamily& family : JobMetricFamilies()) {
    if (BelongsTo(name, family)) return &family;
  }
  return FindPolicyMetricFamily(name);
}

}  // namespace lockstep
