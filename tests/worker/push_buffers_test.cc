#include "worker/push_buffers.h"

#include <gtest/gtest.h>

#include <memory>

namespace lockstep {
namespace {

TEST(PushBuffersTest, OneBufferServesEveryClockWhileNoFrameHoldsIt) {
  PushBuffers buffers;
  HostFloats& first = buffers.Dense(4);
  first[0] = 1;
  HostFloats& second = buffers.Dense(4);
  EXPECT_EQ(&first, &second);
  EXPECT_EQ(buffers.LastDense(4).get(), &second);
}

TEST(PushBuffersTest, ABufferAFrameHoldsIsNotHandedOutAgain) {
  PushBuffers buffers;
  HostFloats& first = buffers.Dense(3);
  first.assign({1, 2, 3});
  // A push frame keeps the buffer until the server lets go of it.
  std::shared_ptr<HostFloats> frame = buffers.LastDense(3);
  HostFloats& second = buffers.Dense(3);
  EXPECT_NE(&first, &second);
  EXPECT_EQ(first, (HostFloats{1, 2, 3}));  // untouched while held
  EXPECT_EQ(buffers.LastDense(3).get(), &second);
  frame.reset();
  // Both are free now; the one handed out last comes first.
  EXPECT_EQ(&buffers.Dense(3), &second);
}

TEST(PushBuffersTest, WithoutAGradientThePushIsOneOfZeros) {
  PushBuffers buffers;
  EXPECT_EQ(*buffers.LastDense(2), (HostFloats{0, 0}));
}

TEST(PushBuffersTest, SparseBuffersAreReplacedWhileAFrameHoldsThem) {
  PushBuffers buffers;
  std::vector<float>& rows = buffers.SparseGradient(6);
  EXPECT_EQ(rows.size(), 6u);
  std::shared_ptr<std::vector<float>> frame = buffers.sparse_gradient();
  std::vector<float>& next = buffers.SparseGradient(2);
  EXPECT_NE(&rows, &next);
  EXPECT_EQ(frame->size(), 6u);
  frame.reset();
  EXPECT_EQ(&buffers.SparseGradient(2), &next);
  EXPECT_TRUE(buffers.SparseIds().empty());
}

}  // namespace
}  // namespace lockstep
