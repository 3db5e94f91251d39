// A standard allocator over a device's host memory (ComputeBackend::
// host_memory(): page-locked for a GPU), for the buffers a device copies
// to and from while it computes: a worker's pulled parameters and the
// gradient its push frames point into. Without one it is the plain heap.
// It holds the HostMemory, so a buffer may outlive the backend and be freed
// on any thread. Like any allocator it throws std::bad_alloc when there is
// no memory at all.
// Thread-safety: as HostMemory (any thread).
#ifndef LOCKSTEP_WORKER_COMPUTE_HOST_ALLOCATOR_H_
#define LOCKSTEP_WORKER_COMPUTE_HOST_ALLOCATOR_H_

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "worker/compute/compute_backend.h"

namespace lockstep {

template <typename T>
class HostAllocator {
 public:
  using value_type = T;
  // A buffer keeps its memory's kind when it is moved or assigned.
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;

  HostAllocator() = default;
  explicit HostAllocator(std::shared_ptr<HostMemory> memory)
      : memory_(std::move(memory)) {}
  template <typename U>
  HostAllocator(const HostAllocator<U>& other)  // NOLINT: rebinding
      : memory_(other.memory()) {}

  T* allocate(size_t n) {
    if (memory_ == nullptr) return std::allocator<T>().allocate(n);
    void* p = memory_->Allocate(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (memory_ == nullptr) {
      std::allocator<T>().deallocate(p, n);
    } else {
      memory_->Free(p);
    }
  }

  const std::shared_ptr<HostMemory>& memory() const { return memory_; }
  friend bool operator==(const HostAllocator& a, const HostAllocator& b) {
    return a.memory_ == b.memory_;
  }

 private:
  std::shared_ptr<HostMemory> memory_;
};

// Floats a device reads and writes asynchronously.
using HostFloats = std::vector<float, HostAllocator<float>>;

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_COMPUTE_HOST_ALLOCATOR_H_
