#include "common/transport/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace lockstep {
namespace {

TEST(BufferPoolTest, CapacityClassesWasteAtMostAQuarter) {
  EXPECT_EQ(BufferPool::CapacityFor(1), BufferPool::kMinPooledBytes);
  EXPECT_EQ(BufferPool::CapacityFor(1 << 20), size_t{1} << 20);
  EXPECT_EQ(BufferPool::CapacityFor((1 << 20) + 1), size_t{5} << 18);
  EXPECT_EQ(BufferPool::CapacityFor(size_t{64} << 20), size_t{64} << 20);
  for (size_t size = 70000; size < (size_t{1} << 34); size = size * 3 / 2) {
    const size_t cap = BufferPool::CapacityFor(size);
    EXPECT_GE(cap, size);
    EXPECT_LE(cap, size + size / 4 + 1) << size;
  }
}

TEST(BufferPoolTest, ReusesReleasedBlocksOfTheSameClass) {
  BufferPool pool(size_t{1} << 30);
  const void* first_data = nullptr;
  {
    zmq::message_t a = pool.Frame(4 << 20);
    ASSERT_EQ(a.size(), size_t{4} << 20);
    std::memset(a.data(), 1, a.size());
    first_data = a.data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  }
  EXPECT_EQ(pool.stats().held_bytes, size_t{4} << 20);
  // A smaller request of the same class gets the same block back.
  zmq::message_t b = pool.Frame((4 << 20) - 100);
  EXPECT_EQ(b.data(), first_data);
  EXPECT_EQ(pool.stats().fresh_blocks, 1u);
  EXPECT_EQ(pool.stats().reused_blocks, 1u);
  EXPECT_EQ(pool.stats().held_bytes, 0u);
  // A different class is a fresh block.
  zmq::message_t c = pool.Frame(1 << 20);
  EXPECT_EQ(pool.stats().fresh_blocks, 2u);
}

TEST(BufferPoolTest, KeepsNoMoreIdleBytesThanItsLimit) {
  BufferPool pool(size_t{3} << 20);
  {
    std::vector<zmq::message_t> frames;
    for (int i = 0; i < 4; ++i) frames.push_back(pool.Frame(1 << 20));
  }
  EXPECT_EQ(pool.stats().held_bytes, size_t{3} << 20);
}

TEST(BufferPoolTest, AnImpossibleReservationIsAnErrorNotAnException) {
  BufferPool pool(size_t{1} << 30);
  auto frame = pool.TryFrame(size_t{1} << 62);
  ASSERT_FALSE(frame.ok());
  EXPECT_NE(frame.status().message().find("no memory"), std::string::npos);
  EXPECT_TRUE(pool.TryFrame(1 << 20).ok());
}

TEST(BufferPoolTest, SmallFramesAreNotPooled) {
  BufferPool pool(size_t{1} << 30);
  { zmq::message_t small = pool.Frame(1000); }
  EXPECT_EQ(pool.stats().fresh_blocks, 0u);
  EXPECT_EQ(pool.stats().held_bytes, 0u);
}

}  // namespace
}  // namespace lockstep
