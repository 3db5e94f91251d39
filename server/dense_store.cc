#include "server/dense_store.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "common/layout.h"

namespace lockstep {
namespace {

std::string SpanText(KeySpan keys) {
  return "[" + std::to_string(keys.begin) + ", " + std::to_string(keys.end) +
         ")";
}

// The number of dense keys `tensors` cover, or an error if they are not
// laid out back to back from key 0.
StatusOr<uint64_t> CoveredKeys(const std::vector<TensorInfo>& tensors) {
  uint64_t next = 0;
  for (const TensorInfo& tensor : tensors) {
    if (tensor.offset != next) {
      return InvalidArgument("tensor " + tensor.name + " starts at key " +
                             std::to_string(tensor.offset) + ", expected " +
                             std::to_string(next));
    }
    next += tensor.size;
  }
  return next;
}

}  // namespace

DenseStore::DenseStore(KeySpan range, int state_slots)
    : range_(range),
      state_slots_(state_slots),
      weights_(range.size(), 0.0f),
      state_(static_cast<size_t>(state_slots) * range.size(), 0.0f) {}

StatusOr<std::unique_ptr<DenseStore>> DenseStore::Create(
    KeySpan range, const std::vector<TensorInfo>& tensors, uint64_t seed,
    int state_slots) {
  if (state_slots < 0 || state_slots > kMaxOptimizerSlots) {
    return InvalidArgument("dense store: state_slots " +
                           std::to_string(state_slots) + " not in [0, " +
                           std::to_string(kMaxOptimizerSlots) + "]");
  }
  LS_ASSIGN_OR_RETURN(const uint64_t covered, CoveredKeys(tensors));
  if (range.begin > range.end || range.end > covered) {
    return InvalidArgument("dense store: range " + SpanText(range) +
                           " is not within the model's keys [0, " +
                           std::to_string(covered) + ")");
  }
  std::unique_ptr<DenseStore> store(new DenseStore(range, state_slots));
  for (const TensorInfo& tensor : tensors) {
    const uint64_t first = std::max(range.begin, tensor.offset);
    const uint64_t last = std::min(range.end, tensor.offset + tensor.size);
    for (uint64_t key = first; key < last; ++key) {
      store->weights_[key - range.begin] =
          InitialValue(seed, key, tensor.init_scale);
    }
  }
  return store;
}

Status DenseStore::CheckWithinRange(KeySpan keys) const {
  if (keys.begin > keys.end || keys.begin < range_.begin ||
      keys.end > range_.end) {
    return InvalidArgument("keys " + SpanText(keys) +
                           " are not within this shard's range " +
                           SpanText(range_));
  }
  return Status::Ok();
}

Status DenseStore::Read(KeySpan keys, float* out) const {
  LS_RETURN_IF_ERROR(CheckWithinRange(keys));
  if (keys.size() > 0) {
    std::memcpy(out, weights_.data() + (keys.begin - range_.begin),
                keys.size() * sizeof(float));
  }
  return Status::Ok();
}

Status DenseStore::ApplyGradient(KeySpan keys, const float* grad,
                                 const Optimizer& opt, double lr,
                                 int64_t step) {
  LS_RETURN_IF_ERROR(CheckWithinRange(keys));
  if (opt.state_slots() != state_slots_) {
    return InvalidArgument("optimizer " + std::string(opt.name()) + " needs " +
                           std::to_string(opt.state_slots()) +
                           " state slots, the store has " +
                           std::to_string(state_slots_));
  }
  if (keys.size() == 0) return Status::Ok();
  const size_t first = keys.begin - range_.begin;
  std::array<float*, kMaxOptimizerSlots> slots{};
  for (int s = 0; s < state_slots_; ++s) {
    slots[s] = state_.data() + s * range_.size() + first;
  }
  opt.Apply(weights_.data() + first, grad, slots.data(), keys.size(), lr, step);
  return Status::Ok();
}

}  // namespace lockstep
