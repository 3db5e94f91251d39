// The report's table around a scenario's event clock (event_metrics.h): a
// row per policy with medians over its runs.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_EVENT_TABLE_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_EVENT_TABLE_H_

#include <string>
#include <utility>
#include <vector>

#include "tools/experiment/runner.h"
#include "tools/experiment/spec.h"

namespace lockstep {

// `groups`: each row's name and the run group (PlannedRun::policy) whose
// finished runs in `states` it is over, in table order.
std::string EventMarkdown(
    const SpecScenario& scenario,
    const std::vector<std::pair<std::string, std::string>>& groups,
    const std::vector<RunState>& states);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_EVENT_TABLE_H_
