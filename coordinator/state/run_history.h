// A run's record files when it resumes from a snapshot round: the clocks
// after the round run again, so what eval.jsonl and metrics.jsonl hold of
// them is of a timeline that was undone (a crash after the round, or a
// damaged newer round skipped). Those lines move to undone-eval.jsonl and
// undone-metrics.jsonl (kept, not lost), so the run's own files read as one
// timeline whose times keep rising; a line torn by a crash moves with them.
// The evaluations kept are handed back, for the resumed run to count on
// from (its newest accuracy, its time to target).
// Thread-safety: not thread-safe; the coordinator's thread owns the files.
#ifndef LOCKSTEP_COORDINATOR_STATE_RUN_HISTORY_H_
#define LOCKSTEP_COORDINATOR_STATE_RUN_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

struct KeptEvaluation {
  int64_t clock = 0;  // the point: clocks' worth of samples applied
  double accuracy = 0;
  double loss = -1;  // -1 when not a number (a loss that diverged)
  double train_s = 0;
};

class RunHistory {
 public:
  // Keeps the lines of `run_dir`'s eval.jsonl of points <= last_clock + 1
  // and of metrics.jsonl of clocks <= last_clock (the state after
  // last_clock), moving the others to the undone- files. Missing files are
  // none. Errors: a file that cannot be read or written.
  static StatusOr<std::vector<KeptEvaluation>> KeepUpTo(
      const std::string& run_dir, int64_t last_clock);
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_STATE_RUN_HISTORY_H_
