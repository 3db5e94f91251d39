#include "worker/push_buffers.h"

#include <algorithm>

namespace lockstep {
namespace {

// Whether a push frame of an earlier clock still holds `buffer` (an
// in-process server reads it in place until its commit). Taking a reference
// is an acquiring read-modify-write of the count, so once the last frame
// has let go, its reads happen before the caller's writes; use_count()
// alone is a relaxed load and orders nothing.
template <typename T>
bool HeldByAFrame(const std::shared_ptr<T>& buffer) {
  // The copy is the acquiring read.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
  const std::shared_ptr<T> probe = buffer;
  return probe.use_count() != 2;  // buffer and probe: no frame
}

template <typename T>
T& Reclaim(std::shared_ptr<T>* buffer, size_t size) {
  if (*buffer == nullptr || HeldByAFrame(*buffer)) {
    *buffer = std::make_shared<T>();
  }
  (*buffer)->resize(size);
  return **buffer;
}

}  // namespace

HostFloats& PushBuffers::Dense(size_t n) {
  // The buffer handed out last comes first (it sits at the front), so one
  // buffer serves every clock unless a frame holds it.
  auto free = std::find_if(
      dense_.begin(), dense_.end(),
      [](const std::shared_ptr<HostFloats>& g) { return !HeldByAFrame(g); });
  if (free == dense_.end()) {
    dense_.push_back(std::make_shared<HostFloats>(n, 0.0f, allocator_));
    free = dense_.end() - 1;
  }
  std::rotate(dense_.begin(), free, free + 1);
  dense_.front()->resize(n);
  return *dense_.front();
}

const std::shared_ptr<HostFloats>& PushBuffers::LastDense(size_t n) {
  if (dense_.empty()) Dense(n);  // a zero gradient
  return dense_.front();
}

std::vector<float>& PushBuffers::SparseGradient(size_t floats) {
  return Reclaim(&sparse_grad_, floats);
}

std::vector<uint64_t>& PushBuffers::SparseIds() {
  return Reclaim(&sparse_ids_, 0);
}

}  // namespace lockstep
