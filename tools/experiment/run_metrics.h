// Everything the report needs from one finished run's folder: the
// coordinator's summary.json, and what metrics.jsonl (a line per worker
// per clock), eval.jsonl (a line per evaluation) and config.json (the job)
// add: clocks to target, per-worker idle shares, staleness percentiles,
// and the LB-BSP predictor's error.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_RUN_METRICS_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_RUN_METRICS_H_

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/experiment/clock_balance.h"
#include "tools/experiment/results.h"

namespace lockstep {

// One line of eval.jsonl.
struct EvalPoint {
  double clock = 0;    // the model after this many clocks of X samples
  double train_s = 0;  // training time then (wall_s in older runs)
  double test_loss = 0, test_accuracy = 0;
  bool final = false;
};

// What a run may reach: test accuracy >= value, or (loss) test loss <=
// value.
struct RunTarget {
  double value = 0;
  bool loss = false;
  bool MetBy(const EvalPoint& e) const {
    return loss ? e.test_loss <= value : e.test_accuracy >= value;
  }
  // "accuracy 0.85", "loss 0.45".
  std::string Text() const;
  bool operator==(const RunTarget&) const = default;
};

// The clock from which a run's clock balance is measured.
inline constexpr int64_t kBalanceFromClock = 10;

struct RunMetrics {
  RunSummary summary;
  double target_accuracy = 0;  // the job's; 0 = none
  // The first evaluation at or above the target, by clock.
  std::optional<double> clocks_to_target;
  double mean_clock_s = 0;  // wall time / committed clocks
  // Per worker (by rank): waiting time over its whole time in clocks
  // (compute + push + pull + wait).
  std::vector<double> idle_share;
  // Per worker: its mean speed, batch / compute_s over its clocks (NaN
  // when it computed nothing).
  std::vector<double> mean_speed;
  // Over every push of every worker; NaN without metrics.jsonl.
  double staleness_p50 = 0, staleness_p99 = 0;
  double pushes = 0, dropped_pushes = 0;
  // LB-BSP's predictors: the RMSE of each worker's speed prediction over
  // the run, over its mean measured speed (batch / compute_s, the speed the
  // predictors predict), averaged over the workers.
  std::optional<double> predictor_rmse_share;
  // Barrier policies (BSP, backup, LB-BSP): how balanced their clocks were
  // from clock kBalanceFromClock on (the first are warm-up for the
  // predictors), against an oracle split (clock_balance.h).
  std::optional<ClockBalance> balance;
  // eval.jsonl, in the file's order; empty without one.
  std::vector<EvalPoint> evals;
  // The first evaluation that meets `target`; nullptr when none did.
  const EvalPoint* FirstReaching(const RunTarget& target) const;
};

// Reads DIR's files. NotFound without summary.json; the other files are
// optional (their metrics are NaN or unset without them); a damaged line
// is Corruption naming the file and line.
StatusOr<RunMetrics> ReadRunMetrics(const std::string& dir);

// The `q` quantile (0..1) of `values` by nearest rank; NaN when empty.
double Quantile(std::vector<double> values, double q);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_RUN_METRICS_H_
