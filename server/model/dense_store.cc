#include "server/model/dense_store.h"

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
    int state_slots, bool initialize) {
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
  if (!initialize) return store;
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

StatusOr<std::span<const float>> DenseStore::Lend(
    KeySpan keys, std::function<void()> reclaim) {
  LS_RETURN_IF_ERROR(CheckWithinRange(keys));
  reclaim_ = std::move(reclaim);
  return std::span<const float>(weights_).subspan(keys.begin - range_.begin,
                                                  keys.size());
}

void DenseStore::EndLoans() {
  if (!reclaim_) return;
  // Cleared first: a reclaim that reads the store lends nothing new.
  std::function<void()> reclaim = std::move(reclaim_);
  reclaim_ = nullptr;
  reclaim();
}

Status DenseStore::ApplyGradient(KeySpan keys, const float* grad,
                                 const Optimizer& opt, const UpdateStep& step) {
  LS_RETURN_IF_ERROR(CheckWithinRange(keys));
  EndLoans();
  const int needs = opt.SlotsFor(step.kind != StepKind::kWhole);
  if (needs != state_slots_) {
    return InvalidArgument(
        "optimizer " + std::string(opt.name()) + " needs " +
        std::to_string(needs) + " state slots for " +
        (step.kind == StepKind::kWhole ? "whole steps" : "shares") +
        ", the store has " + std::to_string(state_slots_));
  }
  if (keys.size() == 0) return Status::Ok();
  if (grad == nullptr && step.kind != StepKind::kClose) {
    return InvalidArgument("an update without a gradient");
  }
  const size_t first = keys.begin - range_.begin;
  if (capture_ == nullptr || capture_->Done()) {
    ApplyPiece(first, keys.size(), grad, opt, step);
    return Status::Ok();
  }
  // Copy-on-write: each piece is one capture chunk of every array (weights
  // and slots have the same byte offsets), copied just before its update.
  const size_t piece = std::max<size_t>(1, capture_->chunk_bytes() / 4);
  for (size_t done = 0; done < keys.size();) {
    const size_t at = first + done;
    const size_t n = std::min(piece - at % piece, keys.size() - done);
    for (int a = 0; a <= state_slots_; ++a) {
      capture_->BeforeWrite(capture_first_ + a, at * sizeof(float),
                            n * sizeof(float));
    }
    ApplyPiece(at, n, grad == nullptr ? nullptr : grad + done, opt, step);
    done += n;
  }
  return Status::Ok();
}

void DenseStore::ApplyPiece(size_t first, size_t n, const float* grad,
                            const Optimizer& opt, const UpdateStep& step) {
  std::array<float*, kMaxOptimizerSlots> slots{};
  for (int s = 0; s < state_slots_; ++s) {
    slots[s] = state_.data() + s * range_.size() + first;
  }
  opt.Apply(weights_.data() + first, grad, slots.data(), n, step);
}

std::vector<CaptureArray> DenseStore::SnapshotArrays() const {
  std::vector<CaptureArray> arrays;
  arrays.push_back({"dense_weights", std::as_bytes(std::span(weights_))});
  const std::span<const float> state(state_);
  for (int s = 0; s < state_slots_; ++s) {
    arrays.push_back(
        {"dense_state_" + std::to_string(s),
         std::as_bytes(state.subspan(s * range_.size(), range_.size()))});
  }
  return arrays;
}

Status DenseStore::LoadOverlap(
    KeySpan from, std::span<const float> weights,
    const std::vector<std::span<const float>>& slots) {
  if (slots.size() != static_cast<size_t>(state_slots_)) {
    return InvalidArgument("the round has " + std::to_string(slots.size()) +
                           " optimizer state slots, this store " +
                           std::to_string(state_slots_));
  }
  LS_RETURN_IF_ERROR(LoadArrayOverlap(from, 0, std::as_bytes(weights)));
  for (int s = 0; s < state_slots_; ++s) {
    LS_RETURN_IF_ERROR(LoadArrayOverlap(from, s + 1, std::as_bytes(slots[s])));
  }
  return Status::Ok();
}

void DenseStore::ZeroSlotsFrom(int first_slot, KeySpan keys) {
  const uint64_t begin = std::max(keys.begin, range_.begin);
  const uint64_t end = std::min(keys.end, range_.end);
  if (begin >= end) return;
  for (int s = std::max(0, first_slot); s < state_slots_; ++s) {
    float* slot = state_.data() + s * range_.size();
    std::fill(slot + (begin - range_.begin), slot + (end - range_.begin), 0.0f);
  }
}

Status DenseStore::LoadArrayOverlap(KeySpan from, int array,
                                    std::span<const std::byte> bytes) {
  EndLoans();
  if (array < 0 || array > state_slots_) {
    return InvalidArgument("array " + std::to_string(array) +
                           " of a store with " + std::to_string(state_slots_) +
                           " state slots");
  }
  if (bytes.size() != from.size() * sizeof(float)) {
    return InvalidArgument("a round's arrays for keys " + SpanText(from) +
                           " do not hold " + std::to_string(from.size()) +
                           " floats each");
  }
  const uint64_t begin = std::max(from.begin, range_.begin);
  const uint64_t end = std::min(from.end, range_.end);
  if (begin >= end) return Status::Ok();
  float* to = array == 0 ? weights_.data()
                         : state_.data() + (array - 1) * range_.size();
  std::memcpy(to + (begin - range_.begin),
              bytes.data() + (begin - from.begin) * sizeof(float),
              (end - begin) * sizeof(float));
  return Status::Ok();
}

}  // namespace lockstep
