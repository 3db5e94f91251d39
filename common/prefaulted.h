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

#include <malloc.h>
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

// Makes this process keep the heap memory it frees (up to 1 GiB) and serve
// buffers under 32 MiB from the heap, for processes that allocate and free
// megabyte buffers all the time (a server's or worker's message frames, a
// restore's 1 MiB chunks). By default glibc maps such a buffer fresh and
// unmaps it again, or trims the heap top after each free, so every buffer
// costs a page fault per 4 KiB; on a VM that maps guest pages on first
// touch, that made a restore of 600 MB in a new server process take 3.4 s
// instead of 1.4 s. Call once at the start of main.
inline void RetainFreedHeapMemory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_PREFAULTED_H_
