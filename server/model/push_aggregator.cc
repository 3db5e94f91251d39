#include "server/model/push_aggregator.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace lockstep {
namespace {

// Fixed-size __restrict chunks let GCC vectorize at -O2 (see optimizer.cc).
constexpr size_t kBlock = 16;

inline void AddScaledChunk(double* __restrict sum, const float* __restrict g,
                           size_t count, double weight) {
  for (size_t j = 0; j < count; ++j) sum[j] += weight * g[j];
}

inline void DivideChunk(float* __restrict out, const double* __restrict sum,
                        size_t count, double total) {
  for (size_t j = 0; j < count; ++j) {
    out[j] = static_cast<float>(sum[j] / total);
  }
}

}  // namespace

WeightedAccumulator::WeightedAccumulator(size_t n) : sum_(n, 0.0) {}

void WeightedAccumulator::Reset() {
  std::fill(sum_.begin(), sum_.end(), 0.0);
  total_batch_ = 0;
  count_ = 0;
}

Status WeightedAccumulator::Add(std::span<const float> grad, uint32_t batch) {
  if (grad.size() != sum_.size()) {
    return InvalidArgument("pushed gradient has " +
                           std::to_string(grad.size()) + " values, expected " +
                           std::to_string(sum_.size()));
  }
  LS_RETURN_IF_ERROR(AddPartial(0, grad, batch));
  AddWeight(batch);
  return Status::Ok();
}

void WeightedAccumulator::AddWeight(uint32_t batch) {
  assert(batch > 0);
  total_batch_ += batch;
  ++count_;
}

Status WeightedAccumulator::AddPartial(size_t offset,
                                       std::span<const float> values,
                                       uint32_t batch) {
  if (offset > sum_.size() || values.size() > sum_.size() - offset) {
    return InvalidArgument("pushed piece [" + std::to_string(offset) + ", " +
                           std::to_string(offset + values.size()) +
                           ") runs past the accumulated range of " +
                           std::to_string(sum_.size()) + " values");
  }
  if (batch == 0) return InvalidArgument("pushed gradient has batch 0");
  const double weight = batch;
  const size_t n = values.size();
  double* sum = sum_.data() + offset;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    AddScaledChunk(sum + i, values.data() + i, kBlock, weight);
  }
  AddScaledChunk(sum + i, values.data() + i, n - i, weight);
  return Status::Ok();
}

void WeightedAccumulator::Finish(std::span<float> out) const {
  assert(count_ > 0 && out.size() == sum_.size());
  const double total = static_cast<double>(total_batch_);
  const size_t n = sum_.size();
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    DivideChunk(out.data() + i, sum_.data() + i, kBlock, total);
  }
  DivideChunk(out.data() + i, sum_.data() + i, n - i, total);
}

}  // namespace lockstep
