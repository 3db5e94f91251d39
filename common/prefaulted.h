// PrefaultedAllocator: a std::allocator for large arrays (a shard's weights
// and optimizer state) that maps all their pages in one madvise call
// (MADV_POPULATE_WRITE) before first use. A fresh 1 GB array would
// otherwise take a page fault per 4 KiB page when first written (a restore,
// a new shard): on a VM, where a fault is costly, that dominated a large
// restore (restore of 1.2 GB: 216-286 MB/s with faults, 360-650 MB/s
// prefaulted). Transparent huge pages were faster still for the restore
// (1.6 GB/s) but made every optimizer apply 30-50% slower on the same VM,
// so pages stay 4 KiB. Arrays under 2 MiB are allocated as usual; where
// the kernel lacks MADV_POPULATE_WRITE (before 5.14) the advice fails and
// pages fault in as before.
// Thread-safety: stateless; safe concurrently.
#ifndef LOCKSTEP_COMMON_PREFAULTED_H_
#define LOCKSTEP_COMMON_PREFAULTED_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace lockstep {

inline constexpr size_t kPrefaultMinBytes = size_t{2} << 20;

template <typename T>
struct PrefaultedAllocator {
  using value_type = T;
  PrefaultedAllocator() = default;
  template <typename U>
  explicit PrefaultedAllocator(const PrefaultedAllocator<U>& /*other*/) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kPrefaultMinBytes) return std::allocator<T>().allocate(n);
    const size_t page = 4096;
    const size_t rounded = (bytes + page - 1) / page * page;
    void* p = std::aligned_alloc(page, rounded);
    if (p == nullptr) throw std::bad_alloc();
    madvise(p, rounded, MADV_POPULATE_WRITE);  // advice: failure is harmless
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kPrefaultMinBytes) {
      std::allocator<T>().deallocate(p, n);
      return;
    }
    std::free(p);
  }
  template <typename U>
  bool operator==(const PrefaultedAllocator<U>& /*other*/) const {
    return true;
  }
};

// A large array that is written as soon as it exists.
template <typename T>
using PrefaultedVector = std::vector<T, PrefaultedAllocator<T>>;

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_PREFAULTED_H_
