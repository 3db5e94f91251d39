#include "bench/micro_alloc_counter.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define LOCKSTEP_COUNT_ALLOCATIONS 1
#else
#define LOCKSTEP_COUNT_ALLOCATIONS 0
#endif

namespace lockstep {
namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocs{0};
std::atomic<uint64_t> g_alloc_bytes{0};
std::atomic<uint64_t> g_news{0};

inline void CountAlloc(size_t bytes) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocs.fetch_add(1, std::memory_order_relaxed);
    g_alloc_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
}

inline void CountNew() {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_news.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

bool AllocationsCounted() { return LOCKSTEP_COUNT_ALLOCATIONS != 0; }

void SetAllocCounting(bool on) {
  g_counting.store(on, std::memory_order_relaxed);
}

AllocCounts AllocCountsSoFar() {
  return {g_allocs.load(), g_alloc_bytes.load(), g_news.load()};
}

}  // namespace lockstep

#if LOCKSTEP_COUNT_ALLOCATIONS
// glibc's own entry points, which its malloc family forwards to.
// NOLINTBEGIN(bugprone-reserved-identifier): glibc's names.
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void __libc_free(void* ptr);
}
// NOLINTEND(bugprone-reserved-identifier)

extern "C" void* malloc(size_t size) noexcept {
  lockstep::CountAlloc(size);
  return __libc_malloc(size);
}

extern "C" void* calloc(size_t count, size_t size) noexcept {
  lockstep::CountAlloc(count * size);
  return __libc_calloc(count, size);
}

extern "C" void* realloc(void* ptr, size_t size) noexcept {
  lockstep::CountAlloc(size);
  return __libc_realloc(ptr, size);
}

void* operator new(size_t size) {
  lockstep::CountNew();
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size) { return operator new(size); }
// __libc_free rather than free: GCC would flag free() on memory from
// operator new (-Wmismatched-new-delete) once the two are inlined together.
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t) noexcept { __libc_free(p); }
#endif  // LOCKSTEP_COUNT_ALLOCATIONS
