#include "server/model/push_aggregator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

class WeightedAccumulatorTest : public ::testing::Test {
 protected:
  static std::vector<float> Mean(const WeightedAccumulator& acc) {
    std::vector<float> out(acc.size(), -1.0f);
    acc.Finish(out);
    return out;
  }
};

TEST_F(WeightedAccumulatorTest, SinglePushIsReturnedUnchanged) {
  WeightedAccumulator acc(3);
  const std::vector<float> g = {0.1f, -3.5f, 1e-7f};
  ASSERT_TRUE(acc.Add(g, 17).ok());
  EXPECT_EQ(Mean(acc), g);
}

TEST_F(WeightedAccumulatorTest, UnequalBatchesWeightEachPushByItsBatch) {
  WeightedAccumulator acc(2);
  ASSERT_TRUE(acc.Add(std::vector<float>{4.0f, -8.0f}, 1).ok());
  ASSERT_TRUE(acc.Add(std::vector<float>{8.0f, 0.0f}, 3).ok());
  EXPECT_EQ(acc.count(), 2u);
  EXPECT_EQ(acc.total_batch(), 4u);
  // 0.25 * g1 + 0.75 * g2.
  const std::vector<float> mean = Mean(acc);
  EXPECT_FLOAT_EQ(mean[0], 7.0f);
  EXPECT_FLOAT_EQ(mean[1], -2.0f);
}

TEST_F(WeightedAccumulatorTest, EqualBatchesGivePlainAverageOverManyBlocks) {
  constexpr size_t kN = 45;  // two full blocks and a tail
  WeightedAccumulator acc(kN);
  std::vector<float> a(kN), b(kN);
  for (size_t i = 0; i < kN; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = -3.0f * static_cast<float>(i);
  }
  ASSERT_TRUE(acc.Add(a, 8).ok());
  ASSERT_TRUE(acc.Add(b, 8).ok());
  const std::vector<float> mean = Mean(acc);
  for (size_t i = 0; i < kN; ++i) {
    EXPECT_FLOAT_EQ(mean[i], -static_cast<float>(i)) << i;
  }
}

TEST_F(WeightedAccumulatorTest, SizeMismatchIsRejectedAndNotCounted) {
  WeightedAccumulator acc(3);
  Status status = acc.Add(std::vector<float>{1.0f, 2.0f}, 4);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("2 values, expected 3"));
  EXPECT_EQ(acc.count(), 0u);
  EXPECT_EQ(acc.total_batch(), 0u);
}

TEST_F(WeightedAccumulatorTest, ZeroBatchIsRejected) {
  WeightedAccumulator acc(1);
  EXPECT_EQ(acc.Add(std::vector<float>{1.0f}, 0).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(acc.count(), 0u);
}

TEST_F(WeightedAccumulatorTest, ResetStartsTheNextClockFromZero) {
  WeightedAccumulator acc(2);
  ASSERT_TRUE(acc.Add(std::vector<float>{100.0f, 100.0f}, 5).ok());
  acc.Reset();
  EXPECT_EQ(acc.count(), 0u);
  EXPECT_EQ(acc.total_batch(), 0u);
  ASSERT_TRUE(acc.Add(std::vector<float>{1.0f, 2.0f}, 2).ok());
  EXPECT_EQ(Mean(acc), (std::vector<float>{1.0f, 2.0f}));
}

TEST_F(WeightedAccumulatorTest, PartialPushContributesZeroOutsideItsPieces) {
  WeightedAccumulator acc(4);
  // Worker A (batch 1) covers keys [0, 1) and [3, 4); worker B (batch 3)
  // covers everything.
  acc.AddWeight(1);
  ASSERT_TRUE(acc.AddPartial(0, std::vector<float>{8.0f}, 1).ok());
  ASSERT_TRUE(acc.AddPartial(3, std::vector<float>{4.0f}, 1).ok());
  ASSERT_TRUE(acc.Add(std::vector<float>{0.0f, 4.0f, 8.0f, 0.0f}, 3).ok());
  EXPECT_EQ(acc.count(), 2u);
  EXPECT_EQ(acc.total_batch(), 4u);
  EXPECT_EQ(Mean(acc), (std::vector<float>{2.0f, 3.0f, 6.0f, 1.0f}));
}

TEST_F(WeightedAccumulatorTest, PartialPushPastTheRangeIsRejected) {
  WeightedAccumulator acc(4);
  EXPECT_EQ(acc.AddPartial(3, std::vector<float>{1.0f, 2.0f}, 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(acc.AddPartial(5, {}, 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(acc.AddPartial(0, std::vector<float>{1.0f}, 0).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lockstep
