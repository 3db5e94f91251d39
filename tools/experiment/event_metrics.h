// What a run did around a scenario's event clock (a link that slows down,
// a speed change): the clock time before it, right after it and once
// settled, how many clocks the batch sizes took to settle again, and the
// gap between the workers' busy times (compute + push + pull) before and
// after. A BSP-like clock takes as long as its busiest worker, so a clock's
// time here is the largest busy time among its workers.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_EVENT_METRICS_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_EVENT_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

struct EventMetrics {
  // Medians of the clock time (ms) over [C-50, C), [C, C+10) and the last
  // 50 clocks of the run.
  double before_ms = 0, right_after_ms = 0, settled_ms = 0;
  // Clocks from C until every worker's batch (median of the 5 clocks
  // around each) stays within max(2, 5%) of its settled size (median of
  // the run's last 20 clocks) to the end.
  int64_t rebalance_clocks = 0;
  // Clocks from C until the clock time (median of the 5 clocks around
  // each) stays within 10% of settled_ms to the end.
  int64_t settle_clocks = 0;
  // Median of (max - min) / max of the workers' busy times, in the same
  // windows as before_ms and settled_ms.
  double gap_before = 0, gap_settled = 0;
  // Each worker's median batch before C and at the end.
  std::vector<double> batches_before, batches_settled;
};

// Reads DIR/metrics.jsonl around `event_clock`. FailedPrecondition when the
// run has fewer than 60 clocks after the event or 10 before it.
StatusOr<EventMetrics> ReadEventMetrics(const std::string& dir,
                                        int64_t event_clock);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_EVENT_METRICS_H_
