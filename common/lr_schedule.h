// Learning-rate schedules. A job's is parsed in one place
// (JobConfig::LearningRateSchedule) and evaluated in one: each shard's
// updater, at the clock of every step it applies - a commit's under
// commit policies, each push's share of a logical clock on arrival - so
// every shard applies the same rate under every policy.
// Thread-safety: immutable after Parse.
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
