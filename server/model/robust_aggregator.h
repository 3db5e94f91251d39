// The robust rules of --aggregate (common/aggregation.h) over a clock's
// dense pushes: at each key, the median of the workers' values, or their
// mean after cutting the floor(trim * m) largest and smallest of the m
// values there. Keys a push does not cover are NaN in its view and have no
// vote. The sparse table keeps the weighted mean (a row is in the pushes
// of the workers that touched it, often one).
// Thread-safety: Aggregate() is const; one scratch buffer per call.
#ifndef LOCKSTEP_SERVER_MODEL_ROBUST_AGGREGATOR_H_
#define LOCKSTEP_SERVER_MODEL_ROBUST_AGGREGATOR_H_

#include <span>
#include <vector>

#include "common/aggregation.h"

namespace lockstep {

class RobustAggregator {
 public:
  explicit RobustAggregator(Aggregation rule) : rule_(rule) {}

  // out[i] from pushes[w][i] for every w (each as long as out).
  void Aggregate(const std::vector<std::span<const float>>& pushes,
                 std::span<float> out) const;

 private:
  // The rule over values[0, m), reordered in place.
  float Combine(float* values, size_t m) const;

  Aggregation rule_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_MODEL_ROBUST_AGGREGATOR_H_
