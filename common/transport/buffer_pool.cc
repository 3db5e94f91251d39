#include "common/transport/buffer_pool.h"

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <new>
#include <string>

namespace lockstep {
namespace {

constexpr size_t kHugePage = 2u << 20;
constexpr size_t kAlignment = 64;

}  // namespace

BufferPool::BufferPool(size_t max_held_bytes)
    : max_held_bytes_(max_held_bytes) {}

BufferPool::~BufferPool() {
  MutexLock lock(&mu_);
  for (auto& [capacity, blocks] : idle_) {
    for (Block* b : blocks) {
      FreeBlock(b->data, b->capacity);
      delete b;
    }
  }
}

BufferPool& BufferPool::Process() {
  static BufferPool* pool = new BufferPool(size_t{2} << 30);
  return *pool;
}

size_t BufferPool::CapacityFor(size_t size) {
  if (size <= kMinPooledBytes) return kMinPooledBytes;
  // Classes 1, 1.25, 1.5, 1.75 times a power of two.
  const size_t top = std::bit_floor(size);
  const size_t step = std::max<size_t>(1, top / 4);  // top >= 64 KiB
  const size_t steps = (size - top + step - 1) / step;
  return top + steps * step;
}

void* BufferPool::AllocateBlock(size_t capacity) {
  if (capacity >= kHugePage) {
    void* p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    // Best effort: fewer first-touch faults where THP is in madvise mode.
    (void)madvise(p, capacity, MADV_HUGEPAGE);
    return p;
  }
  void* p = std::aligned_alloc(kAlignment, capacity);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void BufferPool::FreeBlock(void* data, size_t capacity) {
  if (capacity >= kHugePage) {
    munmap(data, capacity);
  } else {
    std::free(data);
  }
}

zmq::message_t BufferPool::Frame(size_t size) {
  if (size < kMinPooledBytes) return zmq::message_t(size);
  const size_t capacity = CapacityFor(size);
  Block* block = nullptr;
  {
    MutexLock lock(&mu_);
    auto it = idle_.find(capacity);
    if (it != idle_.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
      stats_.held_bytes -= capacity;
      ++stats_.reused_blocks;
    } else {
      ++stats_.fresh_blocks;
    }
  }
  if (block == nullptr) {
    block = new Block{this, AllocateBlock(capacity), capacity};
  }
  return zmq::message_t(block->data, size, &BufferPool::Release, block);
}

void BufferPool::Release(void*, void* hint) {
  auto* block = static_cast<Block*>(hint);
  BufferPool* pool = block->pool;
  {
    MutexLock lock(&pool->mu_);
    if (pool->stats_.held_bytes + block->capacity <= pool->max_held_bytes_) {
      pool->idle_[block->capacity].push_back(block);
      pool->stats_.held_bytes += block->capacity;
      return;
    }
  }
  FreeBlock(block->data, block->capacity);
  delete block;
}

StatusOr<zmq::message_t> BufferPool::TryFrame(size_t size) {
  try {
    return Frame(size);
  } catch (const std::bad_alloc&) {
    return Unavailable("no memory for a frame of " + std::to_string(size) +
                       " bytes");
  }
}

BufferPool::Stats BufferPool::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace lockstep
