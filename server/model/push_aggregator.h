// Aggregation of the dense gradients pushed for one clock.
// Thread-safety: not thread-safe; the owner serialises calls.
#ifndef LOCKSTEP_SERVER_MODEL_PUSH_AGGREGATOR_H_
#define LOCKSTEP_SERVER_MODEL_PUSH_AGGREGATOR_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace lockstep {

// The batch-weighted mean of the pushed gradients over n parameters,
// g = sum_w n_w g_w / sum_w n_w: each worker's mean gradient counts in
// proportion to the samples behind it (LB-BSP's weighted aggregation; with
// equal batches, plain averaging). Sums are kept in double so the mean does
// not depend on the order or number of pushes beyond rounding of the result.
class WeightedAccumulator {
 public:
  explicit WeightedAccumulator(size_t n);

  // Number of parameters.
  size_t size() const { return sum_.size(); }
  // Forgets every push; the next clock starts from zero.
  void Reset();
  // Adds one worker's mean gradient over `batch` samples. InvalidArgument,
  // with nothing added, if grad.size() != size() or batch == 0.
  // Same as AddWeight(batch) plus AddPartial(0, grad, batch).
  Status Add(std::span<const float> grad, uint32_t batch);

  // A push may cover only parts of the range; keys it does not cover get 0
  // from it, but its batch still counts in the denominator. Such a push is
  // added with one AddWeight and one AddPartial per covered piece.
  // Counts one push of `batch` samples without adding values.
  // REQUIRES: batch > 0.
  void AddWeight(uint32_t batch);
  // Adds batch * values to the sums of parameters [offset, offset +
  // values.size()); does not count a push. InvalidArgument, with nothing
  // added, if the piece runs past size() or batch == 0.
  Status AddPartial(size_t offset, std::span<const float> values,
                    uint32_t batch);

  // Sum of the batches added since the last Reset.
  uint64_t total_batch() const { return total_batch_; }
  // Number of pushes added since the last Reset.
  uint32_t count() const { return count_; }
  // Writes the weighted mean into `out`.
  // REQUIRES: count() > 0 and out.size() == size().
  void Finish(std::span<float> out) const;

 private:
  std::vector<double> sum_;  // sum_w n_w g_w
  uint64_t total_batch_ = 0;
  uint32_t count_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_MODEL_PUSH_AGGREGATOR_H_
