// Reused receive and reply buffers for large frames. A fresh multi-MiB
// allocation per message costs a page fault per 4 KiB page on first touch
// (plus zeroing by the kernel), which halves large-message bandwidth; the
// pool hands out blocks that were touched before. Blocks of 2 MiB and more
// are mapped with transparent huge pages requested (MADV_HUGEPAGE), so even
// their first touch faults once per 2 MiB.
// Thread-safety: thread-safe. Frames may be released on any thread (ZeroMQ
// releases sent frames on its I/O thread).
#ifndef LOCKSTEP_COMMON_TRANSPORT_BUFFER_POOL_H_
#define LOCKSTEP_COMMON_TRANSPORT_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>
#include <zmq.hpp>

#include "common/mutex.h"
#include "common/status.h"

namespace lockstep {

class BufferPool {
 public:
  // Frames below this size are plain allocations (malloc reuses them fast).
  static constexpr size_t kMinPooledBytes = 64u << 10;

  struct Stats {
    uint64_t fresh_blocks = 0;   // blocks allocated from the system
    uint64_t reused_blocks = 0;  // frames served from a released block
    uint64_t held_bytes = 0;     // capacity currently idle in the pool
  };

  // `max_held_bytes`: idle capacity kept for reuse; releases beyond it go
  // back to the system.
  explicit BufferPool(size_t max_held_bytes);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // The process-wide pool (2 GiB of idle capacity at most). Never destroyed,
  // so frames released during static destruction stay valid.
  static BufferPool& Process();

  // A frame of exactly `size` bytes, contents unspecified, 64-byte aligned
  // when pooled. Its storage returns to this pool when the frame is freed.
  // Throws std::bad_alloc when the system has no memory for it.
  zmq::message_t Frame(size_t size);
  // Frame, with running out of memory as Unavailable instead of an
  // exception (for sizes a peer declared).
  StatusOr<zmq::message_t> TryFrame(size_t size);

  Stats stats() const;

  // The capacity a request of `size` bytes is rounded up to: four classes
  // per power of two, so at most 25% of a block is unused.
  static size_t CapacityFor(size_t size);

 private:
  struct Block {
    BufferPool* pool;
    void* data;
    size_t capacity;
  };
  static void* AllocateBlock(size_t capacity);
  static void FreeBlock(void* data, size_t capacity);
  static void Release(void* data, void* hint);

  const size_t max_held_bytes_;
  mutable Mutex mu_;
  std::map<size_t, std::vector<Block*>> idle_ GUARDED_BY(mu_);  // by capacity
  Stats stats_ GUARDED_BY(mu_);
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_BUFFER_POOL_H_
