// How well a run's barrier clocks were balanced, judged by the error that
// matters to LB-BSP (issue 23): for each worker and clock, the clock time
// the policy predicted at the quota it assigned (metrics.jsonl's
// predicted_compute_s: quota / predicted speed) beside the measured
// compute_s; and each clock's barrier idle time against an oracle split.
//
// The oracle of clock c knows every worker's true speed in c, measured as
// v_w = batch_w / compute_s_w (the speed at the batch it ran; a cost
// a + b*x makes the speed grow a little with the batch, so this is a
// proxy), and each worker's push + pull time as measured, and splits the
// clock's global batch X = sum of batches so that every worker's busy time
// ends together: x*_w = v_w (T* - push_w - pull_w), as integers (what
// LB-BSP's numerical method aims at; on equal links it is the split in
// proportion to speed). Its compute time for w is x*_w / v_w. A worker's
// busy time is compute + push + pull, a clock lasts as long as its busiest
// worker (T_c), and the others idle at the barrier until then.
//
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_CLOCK_BALANCE_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_CLOCK_BALANCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

// The fields of one metrics.jsonl line that the balance needs.
struct ClockLine {
  uint32_t worker = 0;
  int64_t clock = 0;
  uint32_t batch = 0;
  double compute_s = 0, push_s = 0, pull_s = 0;
  // quota / the policy's predicted speed; unset without a prediction.
  std::optional<double> predicted_compute_s;
};

struct ClockBalance {
  // Clocks that every worker of the run reported, each with a batch and a
  // compute time (the others, e.g. a worker's clock cut short by its death,
  // are left out).
  int64_t clocks = 0;
  // Mean over (worker, clock) of |predicted - measured| / measured compute
  // time at the assigned quota; unset when the run has no predictions (BSP,
  // LB-BSP's numerical method).
  std::optional<double> predicted_time_mape;
  int64_t predictions = 0;
  // The same error for the last-value rule on the same run: the quota over
  // the worker's speed in its previous clock. A paired reference (over the
  // pairs with a prediction, when the run has any), not a rerun.
  std::optional<double> last_value_time_mape;
  // Barrier idle as a share of the workers' time in clocks:
  // sum_c sum_w (T_c - busy_w,c) / sum_c N_c T_c; and the oracle's.
  double idle_share = 0;
  double oracle_idle_share = 0;
  // sum_c T_c / sum_c T*_c: how much longer the clocks took than the
  // oracle split's (1 = as balanced as a perfect predictor's).
  double clock_time_ratio = 0;
};

// The balance of the clocks >= `from_clock` of `lines` (any order; a clock
// without a line from every worker that appears in `lines` is left out).
ClockBalance ComputeClockBalance(const std::vector<ClockLine>& lines,
                                 int64_t from_clock = 0);

// The lines of a run's metrics.jsonl at `path`. NotFound when it is
// missing; Corruption naming the file and line for a damaged line.
StatusOr<std::vector<ClockLine>> ReadClockLines(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_CLOCK_BALANCE_H_
