// The buffers a worker computes its gradients into and pushes from. A push
// frame points into its buffer without a copy, and an in-process server
// reads it in place until its commit, so a buffer is reused only once no
// frame holds it: the one handed out last comes first, and another is
// made only while frames hold the others. Every buffer stays allocated as
// long as this object, so what a caller holds of one stays valid.
// Thread-safety: one thread; frames may release buffers from any thread
// (shared_ptr counts).
#ifndef LOCKSTEP_WORKER_PUSH_BUFFERS_H_
#define LOCKSTEP_WORKER_PUSH_BUFFERS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "worker/compute/host_allocator.h"

namespace lockstep {

class PushBuffers {
 public:
  // Host memory the model's device copies from and to at full speed; for
  // buffers made from now on.
  void set_allocator(HostAllocator<float> allocator) {
    allocator_ = std::move(allocator);
  }
  // A dense gradient buffer of `n` floats held by no frame.
  HostFloats& Dense(size_t n);
  // The buffer Dense() returned last; one of `n` zeros if none was.
  const std::shared_ptr<HostFloats>& LastDense(size_t n);
  // The sparse gradient of `floats` floats, and its row ids.
  std::vector<float>& SparseGradient(size_t floats);
  std::vector<uint64_t>& SparseIds();
  const std::shared_ptr<std::vector<float>>& sparse_gradient() const {
    return sparse_grad_;
  }
  const std::shared_ptr<std::vector<uint64_t>>& sparse_ids() const {
    return sparse_ids_;
  }

 private:
  HostAllocator<float> allocator_;
  // The last one handed out first; more only while frames hold them.
  std::vector<std::shared_ptr<HostFloats>> dense_;
  std::shared_ptr<std::vector<uint64_t>> sparse_ids_;
  std::shared_ptr<std::vector<float>> sparse_grad_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_PUSH_BUFFERS_H_
