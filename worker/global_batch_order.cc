#include "worker/global_batch_order.h"

#include "worker/sample_stream.h"

namespace lockstep {

GlobalBatchOrder::GlobalBatchOrder(uint64_t total_samples,
                                   uint64_t global_batch, uint64_t seed)
    : total_(total_samples), global_batch_(global_batch), seed_(seed) {}

uint64_t GlobalBatchOrder::SampleAt(uint64_t position) {
  const uint64_t epoch = position / total_;
  if (epoch != epoch_) {
    // Each epoch is a fresh permutation; epoch 0 uses the job's seed.
    perm_ = SampleStream::GlobalPermutation(
        total_, seed_ + epoch * 0x9e3779b97f4a7c15ULL);
    epoch_ = epoch;
  }
  return perm_[position % total_];
}

void GlobalBatchOrder::Slice(int64_t clock, uint64_t offset, uint32_t count,
                             std::vector<uint64_t>* out) {
  out->resize(count);
  const uint64_t start = static_cast<uint64_t>(clock) * global_batch_ + offset;
  for (uint32_t j = 0; j < count; ++j) (*out)[j] = SampleAt(start + j);
}

}  // namespace lockstep
