#include "server/snapshot/snapshot_capture.h"

#include <algorithm>
#include <cstring>

namespace lockstep {

SnapshotCapture::SnapshotCapture(std::vector<CaptureArray> arrays,
                                 size_t chunk_bytes, SnapshotCapture* recycle)
    : chunk_bytes_(std::max<size_t>(chunk_bytes, 1)), remaining_(0) {
  arrays_.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    CaptureArray& a = arrays[i];
    Array array;
    array.name = std::move(a.name);
    array.live = a.bytes;
    const size_t need = std::max<size_t>(a.bytes.size(), 1);
    if (recycle != nullptr && i < recycle->arrays_.size() &&
        recycle->arrays_[i].capacity >= need) {
      array.image = std::move(recycle->arrays_[i].image);
      array.capacity = recycle->arrays_[i].capacity;
      recycle->arrays_[i].capacity = 0;
    } else {
      // new T[n] without "()" leaves the bytes uninitialised: no page is
      // touched until a chunk is copied into it.
      array.image.reset(new std::byte[need]);
      array.capacity = need;
    }
    array.first_chunk = states_size_;
    states_size_ += (a.bytes.size() + chunk_bytes_ - 1) / chunk_bytes_;
    arrays_.push_back(std::move(array));
  }
  // Value-initialised: every chunk kPending.
  states_.reset(new std::atomic<uint8_t>[states_size_]());
  remaining_.store(states_size_, std::memory_order_release);
}

bool SnapshotCapture::CopyChunk(size_t array, size_t chunk) {
  Array& a = arrays_[array];
  std::atomic<uint8_t>& state = states_[a.first_chunk + chunk];
  uint8_t expected = kPending;
  if (state.compare_exchange_strong(expected, kCopying,
                                    std::memory_order_acquire)) {
    const size_t offset = chunk * chunk_bytes_;
    const size_t size = std::min(chunk_bytes_, a.live.size() - offset);
    std::memcpy(a.image.get() + offset, a.live.data() + offset, size);
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
