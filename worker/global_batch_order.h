// Global data order: the training set is walked as one sequence of seeded
// per-epoch permutations; clock c's global batch is positions
// [c*X, (c+1)*X) of that sequence, and a worker takes `quota` samples
// starting at its batch offset within it. Quotas may differ per worker and
// change every clock without biasing the sample distribution, which is
// what LB-BSP needs (the paper's claim: each iteration is statistically a
// BSP iteration with global batch X).
// Thread-safety: not thread-safe (caches the current permutation).
#ifndef LOCKSTEP_WORKER_GLOBAL_BATCH_ORDER_H_
#define LOCKSTEP_WORKER_GLOBAL_BATCH_ORDER_H_

#include <cstdint>
#include <vector>

namespace lockstep {

class GlobalBatchOrder {
 public:
  // REQUIRES: total_samples > 0, global_batch > 0.
  GlobalBatchOrder(uint64_t total_samples, uint64_t global_batch,
                   uint64_t seed);

  // Replaces *out with the samples of clock `clock` at [offset,
  // offset+count) within its global batch.
  void Slice(int64_t clock, uint64_t offset, uint32_t count,
             std::vector<uint64_t>* out);

  // The sample at global position `position` (epoch = position / total).
  uint64_t SampleAt(uint64_t position);

 private:
  uint64_t total_;
  uint64_t global_batch_;
  uint64_t seed_;
  uint64_t epoch_ = UINT64_MAX;  // epoch of perm_
  std::vector<uint64_t> perm_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_GLOBAL_BATCH_ORDER_H_
