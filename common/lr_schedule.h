// Learning-rate schedules. The coordinator evaluates the schedule for each
// clock and sends the rate with the Commit, so every shard applies the same
// rate. Thread-safety: immutable after Parse.
#ifndef LOCKSTEP_COMMON_LR_SCHEDULE_H_
#define LOCKSTEP_COMMON_LR_SCHEDULE_H_

#include <cstdint>
#include <string>

#include "common/status.h"

namespace lockstep {

class LrSchedule {
 public:
  // "const", "step:EVERY:GAMMA" (multiply by GAMMA every EVERY clocks) or
  // "cosine" (half-cosine decay from base_lr to 0 over total_clocks).
  static StatusOr<LrSchedule> Parse(const std::string& text, double base_lr,
                                    int64_t total_clocks);
  // The rate for clock `clock` (0-based).
  double RateAt(int64_t clock) const;

 private:
  enum class Kind { kConst, kStep, kCosine };
  Kind kind_ = Kind::kConst;
  double base_ = 0;
  int64_t every_ = 1;
  double gamma_ = 1;
  int64_t total_ = 1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_LR_SCHEDULE_H_
