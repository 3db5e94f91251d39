#include "sync_policies/policy_metric_families.h"

namespace lockstep {

const std::vector<MetricFamily>& PolicyMetricFamilies() {
  static const auto* families = new std::vector<MetricFamily>{
      {"lockstep_committed_clock", "gauge",
       "The newest clock the policy committed (barrier policies)"},
      {"lockstep_live_workers", "gauge",
       "Workers the policy counts as live members of the job"},
      {"lockstep_quota", "gauge",
       "Samples the worker is given for its next clock (its batch quota)"},
      {"lockstep_backup_workers", "gauge",
       "Backup workers: the slowest of each clock whose pushes are dropped"},
      {"lockstep_dropped_pushes_total", "counter",
       "Pushes dropped as too late for their clock (backup workers; at "
       "/metrics the coordinator's own count of shards' drops stands)"},
      {"lockstep_worker_dropped_pushes_total", "counter",
       "Pushes of the worker that arrived after its clock committed and "
       "were dropped (backup workers)"},
      {"lockstep_worker_clock", "gauge",
       "The newest clock the worker completed (on-arrival policies)"},
      {"lockstep_clock_gap", "gauge",
       "Clocks between the fastest and the slowest live worker"},
      {"lockstep_min_clock", "gauge",
       "The newest clock every live worker has completed"},
      {"lockstep_deferred_admissions_total", "counter",
       "Admissions SSP held back until the slowest worker caught up"},
      {"lockstep_staleness_bound", "gauge",
       "SSP's staleness bound s, in clocks"},
      {"lockstep_asp_scale_lr", "gauge",
       "1 when ASP scales a push's step by its staleness, else 0"},
      {"lockstep_asp_max_staleness", "gauge",
       "ASP's staleness beyond which a push is dropped (0: none)"},
      {"lockstep_global_batch", "gauge",
       "LB-BSP's global batch X, split among the workers by their quotas"},
      {"lockstep_quota_samples", "gauge",
       "The sum of LB-BSP's quotas (equals the global batch)"},
      {"lockstep_quota_infeasible", "gauge",
       "1 when no split of the global batch fits the workers' batch limits"},
      {"lockstep_lbbsp_resplits_total", "counter",
       "Times LB-BSP split the global batch anew"},
      {"lockstep_lbbsp_phase", "gauge",
       "The numerical quota search's phase (0 fast approach, 1 fine tune, "
       "2 balanced)"},
      {"lockstep_lbbsp_step", "gauge",
       "The numerical quota search's step, in samples"},
      {"lockstep_lbbsp_window", "gauge",
       "Clocks the numerical quota search averages over"},
      {"lockstep_lbbsp_moves_total", "counter",
       "Moves of samples between workers the numerical quota search made"},
      {"lockstep_predictor_rmse", "gauge",
       "The worker's speed predictor's root mean squared error, samples/s"},
      {"lockstep_predicted_speed", "gauge",
       "The worker's predicted speed its quota was set by, samples/s"},
  };
  return *families;
}

const MetricFamily* FindPolicyMetricFamily(std::string_view name) {
  for (const MetricFamily& family : PolicyMetricFamilies()) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

}  // namespace lockstep
