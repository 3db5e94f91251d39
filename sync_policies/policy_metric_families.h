// The metric families the sync policies publish (SyncPolicy::Metrics),
// each with its Prometheus type and help: one table beside the policies,
// so a policy that adds a figure describes it here too (a test runs every
// registered policy and finds each family it publishes in this table).
// Thread-safety: the table is immutable.
#ifndef LOCKSTEP_SYNC_POLICIES_POLICY_METRIC_FAMILIES_H_
#define LOCKSTEP_SYNC_POLICIES_POLICY_METRIC_FAMILIES_H_

#include <string_view>
#include <vector>

#include "common/metric_family.h"

namespace lockstep {

const std::vector<MetricFamily>& PolicyMetricFamilies();
// The family of `name` (a series' name without labels), or null.
const MetricFamily* FindPolicyMetricFamily(std::string_view name);

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_POLICY_METRIC_FAMILIES_H_
