#include "server/model/snapshot_capture.h"

#include <algorithm>
#include <cstring>

namespace lockstep {

SnapshotCapture::SnapshotCapture(std::vector<CaptureArray> arrays,
                                 size_t chunk_bytes, SnapshotCapture* recycle)
    : chunk_bytes_(std::max<size_t>(chunk_bytes, 1)), remaining_(0) {
  // Only a finished capture's image is a basis to compare with.
  const bool compare = recycle != nullptr && recycle->Done();
  arrays_.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    CaptureArray& a = arrays[i];
    Array array;
    array.name = std::move(a.name);
    array.live = a.bytes;
    array.unit = a.unit == 0 ? chunk_bytes_ : a.unit;
    if (recycle != nullptr && i < recycle->arrays_.size()) {
      Recycle(recycle->arrays_[i], compare, &array);
    }
    if (array.image == nullptr) {
      // new T[n] without "()" leaves the bytes uninitialised: no page is
      // touched until a chunk is copied into it. An array that grew (a
      // sparse table) gets room to grow on.
      const size_t need = std::max<size_t>(a.bytes.size(), 1);
      array.capacity = array.previous != nullptr ? need + need / 4 : need;
      array.image.reset(new std::byte[array.capacity]);
    }
    if (array.compared) {
      array.changed.reset(new std::atomic<uint8_t>[UnitsOf(array)]());
    }
    array.first_chunk = states_size_;
    states_size_ += (a.bytes.size() + chunk_bytes_ - 1) / chunk_bytes_;
    arrays_.push_back(std::move(array));
  }
  // Value-initialised: every chunk kPending.
  states_.reset(new std::atomic<uint8_t>[states_size_]());
  remaining_.store(states_size_, std::memory_order_release);
}

void SnapshotCapture::Recycle(Array& old, bool compare, Array* array) const {
  array->compared = compare && old.name == array->name && old.image != nullptr;
  array->basis_bytes = array->compared ? old.live.size() : 0;
  const size_t need = std::max<size_t>(array->live.size(), 1);
  if (old.capacity >= need) {
    array->image = std::move(old.image);
    array->capacity = old.capacity;
  } else if (array->compared) {
    array->previous = std::move(old.image);
  }
  old.capacity = 0;
  old.image.reset();
}

size_t SnapshotCapture::units(size_t array) const {
  return UnitsOf(arrays_[array]);
}

size_t SnapshotCapture::UnitsOf(const Array& a) {
  return (a.live.size() + a.unit - 1) / a.unit;
}

bool SnapshotCapture::changed(size_t array, size_t u) const {
  const Array& a = arrays_[array];
  return !a.compared || a.changed[u].load(std::memory_order_relaxed) != 0;
}

void SnapshotCapture::CompareAndCopy(Array& a, size_t offset, size_t size) {
  const std::byte* live = a.live.data();
  std::byte* image = a.image.get();
  const std::byte* basis = a.previous != nullptr ? a.previous.get() : image;
  const bool in_place = basis == image;
  const size_t end = offset + size;
  // Most chunks of a sparse table's rows are untouched between rounds: one
  // comparison settles them.
  if (in_place && end <= a.basis_bytes &&
      std::memcmp(basis + offset, live + offset, size) == 0) {
    return;
  }
  for (size_t u = offset / a.unit; u * a.unit < end; ++u) {
    const size_t b = std::max(offset, u * a.unit);
    const size_t e = std::min(end, (u + 1) * a.unit);
    const bool differs =
        e > a.basis_bytes || std::memcmp(basis + b, live + b, e - b) != 0;
    if (differs) a.changed[u].store(1, std::memory_order_relaxed);
    if (differs || !in_place) std::memcpy(image + b, live + b, e - b);
  }
}

bool SnapshotCapture::CopyChunk(size_t array, size_t chunk) {
  Array& a = arrays_[array];
  std::atomic<uint8_t>& state = states_[a.first_chunk + chunk];
  uint8_t expected = kPending;
  if (state.compare_exchange_strong(expected, kCopying,
                                    std::memory_order_acquire)) {
    const size_t offset = chunk * chunk_bytes_;
    const size_t size = std::min(chunk_bytes_, a.live.size() - offset);
    if (a.compared) {
      CompareAndCopy(a, offset, size);
    } else {
      std::memcpy(a.image.get() + offset, a.live.data() + offset, size);
    }
    state.store(kCopied, std::memory_order_release);
    state.notify_all();
    ChunkDone();
    return true;
  }
  // Copied, or being copied by the other thread: wait until it is.
  while (expected != kCopied) {
    state.wait(expected, std::memory_order_acquire);
    expected = state.load(std::memory_order_acquire);
  }
  return false;
}

void SnapshotCapture::ChunkDone() {
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    remaining_.notify_all();
  }
}

void SnapshotCapture::Run() {
  for (size_t a = 0; a < arrays_.size(); ++a) {
    const size_t chunks =
        (arrays_[a].live.size() + chunk_bytes_ - 1) / chunk_bytes_;
    for (size_t c = 0; c < chunks && !Done(); ++c) CopyChunk(a, c);
  }
}

void SnapshotCapture::BeforeWrite(size_t array, size_t offset, size_t size) {
  if (size == 0 || Done()) return;
  const size_t first = offset / chunk_bytes_;
  const size_t last = (offset + size - 1) / chunk_bytes_;
  for (size_t c = first; c <= last; ++c) {
    if (CopyChunk(array, c))
      by_mutator_.fetch_add(1, std::memory_order_relaxed);
  }
}

void SnapshotCapture::CaptureAll() {
  for (size_t a = 0; a < arrays_.size() && !Done(); ++a) {
    BeforeWrite(a, 0, arrays_[a].live.size());
  }
}

bool SnapshotCapture::Done() const {
  return remaining_.load(std::memory_order_acquire) == 0;
}

void SnapshotCapture::Wait() const {
  for (uint64_t left = remaining_.load(std::memory_order_acquire); left != 0;
       left = remaining_.load(std::memory_order_acquire)) {
    remaining_.wait(left, std::memory_order_acquire);
  }
}

std::span<const std::byte> SnapshotCapture::image(size_t array) const {
  return {arrays_[array].image.get(), arrays_[array].live.size()};
}

}  // namespace lockstep
