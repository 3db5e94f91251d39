#include "tools/experiment/cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace lockstep {
namespace {

// Spec 1's four speed classes: 1 ms + 0.1 ms a sample, times 1, 3.3, 3.6
// and 6.4.
const HeteroProfiles kFourClasses = {{0, "linear=0.001+0.0001"},
                                     {1, "linear=0.001+0.0001,x3.3"},
                                     {2, "linear=0.001+0.0001,x3.6"},
                                     {3, "linear=0.001+0.0001,x6.4"}};
const double kFactors[] = {1, 3.3, 3.6, 6.4};

double LinearSeconds(int w, double x) {
  return (0.001 + 0.0001 * x) * kFactors[w];
}

TEST(CostModelTest, KeepsOnlyTheDeterministicComputeItems) {
  EXPECT_EQ(CostModel::ComputeItems(
                "linear=0.001+0.0001, transient=0.1/4/3,x2@100,net=1000/0.1,"
                "colo=0.02/0.6/15,x3,cpu=0.5"),
            "linear=0.001+0.0001,x2@100,x3");
  EXPECT_EQ(CostModel::ComputeItems("gpu=0.01/0.001/64,net=50/0.2@150"),
            "gpu=0.01/0.001/64");
  EXPECT_EQ(CostModel::ComputeItems(""), "");
}

TEST(CostModelTest, TellsWhetherEveryWorkerHasACostModel) {
  auto all = CostModel::Create(kFourClasses, 4);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_TRUE(all->complete());
  EXPECT_FALSE(all->none());
  auto factors = CostModel::Create({{1, "x3"}, {2, "transient=0.5/2/2"}}, 3);
  ASSERT_TRUE(factors.ok());
  EXPECT_FALSE(factors->complete());
  EXPECT_TRUE(factors->none());
  auto some = CostModel::Create({{1, "linear=0+0.001"}}, 3);
  ASSERT_TRUE(some.ok());
  EXPECT_FALSE(some->complete());
  EXPECT_FALSE(some->none());
  EXPECT_FALSE(CostModel::Create({{0, "linear=0.001"}}, 2).ok());
}

TEST(CostModelTest, TheBalancedClockFinishesEveryWorkerTogether) {
  auto model = CostModel::Create(kFourClasses, 4);
  ASSERT_TRUE(model.ok());
  // sum_i (T / f_i - a) / b = X  =>  T = (X + N a / b) / sum_i 1 / (b f_i).
  double speeds = 0;
  for (double f : kFactors) speeds += 1 / (0.0001 * f);
  const double t = (128 + 4 * 0.001 / 0.0001) / speeds;
  EXPECT_NEAR(model->BalancedClockSeconds(0, 128), t, 1e-9);
  EXPECT_NEAR(model->ClockSeconds(0, {32, 32, 32, 32}), LinearSeconds(3, 32),
              1e-12);
  EXPECT_NEAR(model->Seconds(1, 7, 10.5), LinearSeconds(1, 10.5), 1e-12);
}

TEST(CostModelTest, TheBalancedSplitIsTheBestWholeSplit) {
  auto model = CostModel::Create(kFourClasses, 4);
  ASSERT_TRUE(model.ok());
  const std::vector<uint32_t> split = model->BalancedSplit(0, 128);
  ASSERT_EQ(split.size(), 4u);
  double slowest = 0;
  uint32_t sum = 0;
  for (int w = 0; w < 4; ++w) {
    EXPECT_GE(split[w], 1u);
    slowest = std::max(slowest, LinearSeconds(w, split[w]));
    sum += split[w];
  }
  EXPECT_EQ(sum, 128u);
  double best = INFINITY;  // every split of 128 into four parts >= 1
  for (int a = 1; a <= 125; ++a) {
    for (int b = 1; a + b <= 126; ++b) {
      for (int c = 1; a + b + c <= 127; ++c) {
        const int d = 128 - a - b - c;
        best = std::min(best,
                        std::max({LinearSeconds(0, a), LinearSeconds(1, b),
                                  LinearSeconds(2, c), LinearSeconds(3, d)}));
      }
    }
  }
  EXPECT_NEAR(slowest, best, 1e-12);
}

TEST(CostModelTest, TheBoundIsTheRatioOfTheRunsSummedClocks) {
  auto model = CostModel::Create(kFourClasses, 4);
  ASSERT_TRUE(model.ok());
  EXPECT_NEAR(
      model->SplitSpeedupBound(100, {32}),
      model->ClockSeconds(0, {32}) / model->BalancedClockSeconds(0, 128), 1e-6);
  // Worker 0 turns 3x slower at clock 5 of 10: an even split of 40 takes
  // 20 ms, then 60 ms; a perfect one 40 / (1000 + 1000) s, then
  // 40 / (333.3 + 1000) s.
  auto drift =
      CostModel::Create({{0, "linear=0+0.001,x3@5"}, {1, "linear=0+0.001"}}, 2);
  ASSERT_TRUE(drift.ok());
  const double even = 5 * 0.020 + 5 * 0.060;
  const double balanced = 5 * 40 / 2000.0 + 5 * 40 / (1000 / 3.0 + 1000);
  EXPECT_NEAR(drift->SplitSpeedupBound(10, {20, 20}), even / balanced, 1e-6);
  // Equal workers: nothing to gain.
  auto equal = CostModel::Create(
      {{0, "linear=0.001+0.001"}, {1, "linear=0.001+0.001"}}, 2);
  ASSERT_TRUE(equal.ok());
  EXPECT_NEAR(equal->SplitSpeedupBound(3, {16, 16}), 1, 1e-6);
}

TEST(CostModelTest, AGpuCapBoundsAWorkersShare) {
  // Worker 0 saturates at 10 ms and holds at most 10 samples.
  auto model =
      CostModel::Create({{0, "gpu=0.01/0.0001/10"}, {1, "linear=0+0.001"}}, 2);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->BalancedSplit(0, 40), (std::vector<uint32_t>{10, 30}));
  EXPECT_NEAR(model->BalancedClockSeconds(0, 40), 0.030, 1e-6);
}

TEST(CostModelTest, AnEvenSplitGivesTheFirstWorkersTheRemainder) {
  EXPECT_EQ(CostModel::EvenSplit(100, 3), (std::vector<uint32_t>{34, 33, 33}));
  EXPECT_EQ(CostModel::EvenSplit(8, 4), (std::vector<uint32_t>{2, 2, 2, 2}));
}

}  // namespace
}  // namespace lockstep
