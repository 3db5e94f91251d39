// The metric families the coordinator publishes at /metrics: its own (the
// run's progress, membership, recovery, snapshot rounds, refusals) here,
// the sync policies' in sync_policies/policy_metric_families.h. Every
// family has a type and a help line (docs/operations.md lists them).
// Thread-safety: the tables are immutable.
#ifndef LOCKSTEP_COORDINATOR_METRIC_FAMILIES_H_
#define LOCKSTEP_COORDINATOR_METRIC_FAMILIES_H_

#include <string_view>
#include <vector>

#include "common/metric_family.h"

namespace lockstep {

// The coordinator's own families.
const std::vector<MetricFamily>& JobMetricFamilies();
// The family a published series name belongs to (the coordinator's or a
// policy's; a histogram's _bucket/_sum/_count too), or null.
const MetricFamily* DescribeJobMetric(std::string_view name);

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_METRIC_FAMILIES_H_
