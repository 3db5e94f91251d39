// How a shard combines the pushes a commit names (--aggregate): the
// batch-weighted mean (the default: the paper's weighted aggregation), or
// a coordinate-wise robust rule that bounds what a minority of workers
// sending bad but finite gradients can do (Yin et al., ICML'18): the
// median of the workers' values at each key, or their mean after cutting
// the largest and smallest `trim` share of them. The robust rules give
// each worker one vote whatever its batch.
// Thread-safety: value type.
#ifndef LOCKSTEP_COMMON_AGGREGATION_H_
#define LOCKSTEP_COMMON_AGGREGATION_H_

#include <string>

#include "common/status.h"

namespace lockstep {

struct Aggregation {
  enum class Rule { kMean, kMedian, kTrimmedMean };
  Rule rule = Rule::kMean;
  double trim = 0;  // kTrimmedMean: the share cut from each end, (0, 0.5)

  // "mean", "median" or "trimmed-mean:F" with 0 < F < 0.5. Errors:
  // InvalidArgument naming the forms.
  static StatusOr<Aggregation> Parse(const std::string& text);
  bool robust() const { return rule != Rule::kMean; }
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_AGGREGATION_H_
