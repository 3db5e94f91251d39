// Heap allocation counting for the allocation benchmarks (micro_alloc.cc).
// Linked into a binary, micro_alloc_counter.cc wraps glibc's malloc, calloc
// and realloc (so libzmq's C allocations, e.g. a copied frame's buffer or a
// zero-copy frame's small control block, are counted) and replaces the
// global operator new/delete (counted separately as news; they allocate
// through malloc, so allocs already includes them). Counting is off except
// between SetAllocCounting(true) and (false), so everything else in the
// binary pays one relaxed atomic load per allocation. Aligned allocations
// (aligned_alloc, posix_memalign) are not counted. Under ASan/TSan the
// wrappers are compiled out and nothing is counted.
// Thread-safety: counters are atomics; any thread may allocate.
#ifndef LOCKSTEP_BENCH_MICRO_ALLOC_COUNTER_H_
#define LOCKSTEP_BENCH_MICRO_ALLOC_COUNTER_H_

#include <cstdint>

namespace lockstep {

struct AllocCounts {
  uint64_t allocs = 0;  // malloc, calloc, realloc calls
  uint64_t bytes = 0;   // bytes they asked for
  uint64_t news = 0;    // operator new calls
};

// False in builds where the wrappers are compiled out (sanitizers).
bool AllocationsCounted();
// Turns counting on or off for every thread.
void SetAllocCounting(bool on);
// The totals counted so far.
AllocCounts AllocCountsSoFar();

}  // namespace lockstep

#endif  // LOCKSTEP_BENCH_MICRO_ALLOC_COUNTER_H_
