#include "sync_policies/lbbsp/quota_split.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>

#include "tests/test_seed.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

class QuotaSplitTest : public ::testing::Test {};

TEST_F(QuotaSplitTest, EqualWeightsSplitEvenlyWithRemainderToLowRanks) {
  const QuotaSplit s = SplitProportionally({{0, 1}, {1, 1}, {2, 1}}, {}, 10);
  EXPECT_THAT(s.quotas, ElementsAre(Pair(0, 4), Pair(1, 3), Pair(2, 3)));
  EXPECT_EQ(s.sum, 10u);
  EXPECT_TRUE(s.feasible);
}

TEST_F(QuotaSplitTest, SplitsInProportionToWeights) {
  const QuotaSplit s =
      SplitProportionally({{0, 4}, {1, 4}, {2, 2}, {3, 1}}, {}, 256);
  EXPECT_THAT(s.quotas,
              ElementsAre(Pair(0, 93), Pair(1, 93), Pair(2, 47), Pair(3, 23)));
  EXPECT_EQ(s.sum, 256u);
}

TEST_F(QuotaSplitTest, LargestRemainderGetsTheSpareUnits) {
  // Exact shares 3.4, 3.3, 3.3 -> 3, 3, 3 and one spare unit; then
  // 1.6, 1.2, 1.2 -> the .6 gets it.
  EXPECT_THAT(SplitProportionally({{0, 34}, {1, 33}, {2, 33}}, {}, 10).quotas,
              ElementsAre(Pair(0, 4), Pair(1, 3), Pair(2, 3)));
  EXPECT_THAT(SplitProportionally({{0, 4}, {1, 3}, {2, 3}}, {}, 4).quotas,
              ElementsAre(Pair(0, 2), Pair(1, 1), Pair(2, 1)));
}

TEST_F(QuotaSplitTest, BoundsAreRespectedAndTheRestIsRedistributed) {
  std::map<uint32_t, QuotaBounds> bounds;
  bounds[0].max = 40;
  bounds[3].min = 40;
  // 40 + 4L + 2L + 40 = 256: L = 29.33, so w1 117.33 and w2 58.67.
  const QuotaSplit s =
      SplitProportionally({{0, 4}, {1, 4}, {2, 2}, {3, 1}}, bounds, 256);
  EXPECT_THAT(s.quotas,
              ElementsAre(Pair(0, 40), Pair(1, 117), Pair(2, 59), Pair(3, 40)));
  EXPECT_EQ(s.sum, 256u);
  EXPECT_TRUE(s.feasible);
}

TEST_F(QuotaSplitTest, ImpossibleMinimumsClampToMinAndReportIt) {
  std::map<uint32_t, QuotaBounds> bounds;
  for (uint32_t w = 0; w < 3; ++w) bounds[w].min = 10;
  const QuotaSplit s =
      SplitProportionally({{0, 1}, {1, 5}, {2, 1}}, bounds, 20);
  EXPECT_THAT(s.quotas, ElementsAre(Pair(0, 10), Pair(1, 10), Pair(2, 10)));
  EXPECT_EQ(s.sum, 30u);
  EXPECT_FALSE(s.feasible);
}

TEST_F(QuotaSplitTest, ImpossibleMaximumsClampToMaxAndReportIt) {
  std::map<uint32_t, QuotaBounds> bounds;
  bounds[0].max = 5;
  bounds[1].max = 7;
  const QuotaSplit s = SplitProportionally({{0, 1}, {1, 1}}, bounds, 20);
  EXPECT_THAT(s.quotas, ElementsAre(Pair(0, 5), Pair(1, 7)));
  EXPECT_FALSE(s.feasible);
}

TEST_F(QuotaSplitTest, ExactlyTheSumOfMaximumsIsFeasible) {
  std::map<uint32_t, QuotaBounds> bounds;
  bounds[0].max = 5;
  bounds[1].max = 7;
  EXPECT_TRUE(SplitProportionally({{0, 1}, {1, 1}}, bounds, 12).feasible);
}

TEST_F(QuotaSplitTest, ConflictingBoundsLetTheCapWin) {
  std::map<uint32_t, QuotaBounds> bounds;
  bounds[0] = {50, 30};
  const QuotaSplit s = SplitProportionally({{0, 1}, {1, 1}}, bounds, 100);
  EXPECT_EQ(s.quotas.at(0), 30u);
  EXPECT_EQ(s.quotas.at(1), 70u);
}

TEST_F(QuotaSplitTest, InvalidWeightsCountAsTheMeanOfValidOnes) {
  const QuotaSplit s =
      SplitProportionally({{0, 2}, {1, 4}, {2, 0}, {3, std::nan("")}}, {}, 120);
  EXPECT_THAT(s.quotas,
              ElementsAre(Pair(0, 20), Pair(1, 40), Pair(2, 30), Pair(3, 30)));
  EXPECT_THAT(SplitProportionally({{0, -1}, {1, 0}}, {}, 9).quotas,
              ElementsAre(Pair(0, 5), Pair(1, 4)));
}

TEST_F(QuotaSplitTest, NoWorkers) {
  const QuotaSplit s = SplitProportionally({}, {}, 64);
  EXPECT_TRUE(s.quotas.empty());
  EXPECT_FALSE(s.feasible);
}

TEST_F(QuotaSplitTest, RandomSplitsSumToTotalWithinBoundsAndNearProportion) {
  std::mt19937_64 rng(TestSeed());
  std::uniform_real_distribution<double> weight(0.01, 100);
  for (int round = 0; round < 2000; ++round) {
    const uint32_t n = 1 + rng() % 12;
    const uint64_t total = n + rng() % 5000;
    std::map<uint32_t, double> weights;
    std::map<uint32_t, QuotaBounds> bounds;
    uint64_t min_sum = 0;
    uint64_t max_sum = 0;
    for (uint32_t w = 0; w < n; ++w) {
      weights[w] = weight(rng);
      bounds[w].min = 1 + rng() % 4;
      bounds[w].max =
          rng() % 3 == 0 ? bounds[w].min + rng() % 800 : QuotaBounds::kNoCap;
      min_sum += bounds[w].min;
      max_sum += bounds[w].max;
    }
    const QuotaSplit s = SplitProportionally(weights, bounds, total);
    ASSERT_EQ(s.feasible, min_sum <= total && total <= max_sum)
        << "round " << round;
    uint64_t sum = 0;
    for (const auto& [w, q] : s.quotas) {
      ASSERT_GE(q, bounds[w].min);
      ASSERT_LE(q, bounds[w].max);
      sum += q;
    }
    ASSERT_EQ(sum, s.sum);
    if (s.feasible) {
      ASSERT_EQ(sum, total) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace lockstep
