#include "sync_policies/lbbsp/numerical_batch_search.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using Phase = NumericalBatchSearch::Phase;

class NumericalBatchSearchTest : public ::testing::Test {
 protected:
  // Feeds `clocks` clocks in which worker w takes `per_sample[w]` seconds
  // per sample of its quota; returns how many of them moved.
  int Run(int clocks, const std::map<uint32_t, double>& per_sample) {
    int moved = 0;
    for (int c = 0; c < clocks; ++c) {
      std::map<uint32_t, double> times;
      for (const auto& [w, q] : quotas_) times[w] = per_sample.at(w) * q;
      moved += search_.OnClock(times, &quotas_, bounds_) ? 1 : 0;
    }
    return moved;
  }

  // (slowest - fastest) / slowest compute time under the current quotas.
  double Gap(const std::map<uint32_t, double>& per_sample) const {
    double slowest = 0;
    double fastest = 1e300;
    for (const auto& [w, q] : quotas_) {
      slowest = std::max(slowest, per_sample.at(w) * q);
      fastest = std::min(fastest, per_sample.at(w) * q);
    }
    return (slowest - fastest) / slowest;
  }

  uint32_t Sum() const {
    uint32_t sum = 0;
    for (const auto& [w, q] : quotas_) sum += q;
    return sum;
  }

  NumericalBatchSearch search_{128, {}};
  std::map<uint32_t, uint32_t> quotas_ = {{0, 32}, {1, 32}, {2, 32}, {3, 32}};
  std::map<uint32_t, QuotaBounds> bounds_;
};

TEST_F(NumericalBatchSearchTest, WaitsForAFullWindowThenMovesAFastStep) {
  search_.Reset(4);
  EXPECT_EQ(search_.step(), 16u) << "X / (2n)";
  EXPECT_EQ(search_.window(), 3u);
  const std::map<uint32_t, double> speed = {{0, 1}, {1, 1}, {2, 1}, {3, 2}};
  EXPECT_EQ(Run(2, speed), 0);
  EXPECT_EQ(Run(1, speed), 1);
  EXPECT_THAT(quotas_,
              ElementsAre(Pair(0, 48), Pair(1, 32), Pair(2, 32), Pair(3, 16)))
      << "from the straggler to the fastest (lowest rank on ties)";
  EXPECT_EQ(search_.phase(), Phase::kFastApproach);
}

TEST_F(NumericalBatchSearchTest, ReversalHalvesTheStepAndDoublesTheWindow) {
  search_.Reset(4);
  quotas_ = {{0, 32}, {1, 32}};
  const std::map<uint32_t, double> speed = {{0, 1}, {1, 1.2}};
  EXPECT_EQ(Run(3, speed), 1);  // 1 -> 0 by 16: 48 vs 16
  EXPECT_THAT(quotas_, ElementsAre(Pair(0, 48), Pair(1, 16)));
  EXPECT_EQ(Run(3, speed), 1);  // w0 now the straggler: a reversal
  EXPECT_EQ(search_.phase(), Phase::kFineTune);
  EXPECT_EQ(search_.step(), 8u);
  EXPECT_EQ(search_.window(), 6u);
  EXPECT_THAT(quotas_, ElementsAre(Pair(0, 40), Pair(1, 24)));
}

TEST_F(NumericalBatchSearchTest, StopsWithinToleranceAndConverges) {
  search_ = NumericalBatchSearch(1024, {});
  quotas_ = {{0, 256}, {1, 256}, {2, 256}, {3, 256}};
  search_.Reset(4);
  const std::map<uint32_t, double> speed = {{0, 1}, {1, 1}, {2, 2}, {3, 4}};
  Run(400, speed);
  EXPECT_EQ(search_.phase(), Phase::kBalanced);
  EXPECT_LT(Gap(speed), 0.03);
  EXPECT_EQ(Sum(), 1024u);
  const uint64_t moves = search_.moves();
  Run(100, speed);
  EXPECT_EQ(search_.moves(), moves) << "balanced: no more moves";
}

TEST_F(NumericalBatchSearchTest, SingleSampleOscillationEndsTheSearch) {
  // X = 128 over 1:1:2:4: the slowest worker gets about 12 samples, so no
  // integer split is within 3%; the search must settle, not dither.
  search_.Reset(4);
  const std::map<uint32_t, double> speed = {{0, 1}, {1, 1}, {2, 2}, {3, 4}};
  Run(400, speed);
  EXPECT_EQ(search_.phase(), Phase::kBalanced);
  EXPECT_EQ(search_.step(), 1u);
  EXPECT_LT(Gap(speed), 0.10);
  const uint64_t moves = search_.moves();
  Run(200, speed);
  EXPECT_EQ(search_.moves(), moves);
}

TEST_F(NumericalBatchSearchTest, NeverExceedsBoundsAndKeepsTheSum) {
  search_.Reset(4);
  bounds_[0].max = 40;
  bounds_[3].min = 24;
  const std::map<uint32_t, double> speed = {{0, 1}, {1, 1}, {2, 2}, {3, 4}};
  for (int c = 0; c < 300; ++c) {
    Run(1, speed);
    uint32_t sum = 0;
    for (const auto& [w, q] : quotas_) sum += q;
    ASSERT_EQ(sum, 128u);
    ASSERT_LE(quotas_.at(0), 40u);
    ASSERT_GE(quotas_.at(3), 24u);
  }
}

TEST_F(NumericalBatchSearchTest, GpuFlatRegionAbsorbsSamplesForFree) {
  // Below 40 samples a worker takes the same time: the leader search finds
  // that growing it costs nothing.
  search_.Reset(2);
  quotas_ = {{0, 64}, {1, 64}};
  for (int c = 0; c < 200; ++c) {
    std::map<uint32_t, double> times = {
        {0, std::max(0.04, 0.001 * quotas_[0])},
        {1, std::max(0.04, 0.003 * quotas_[1])}};
    search_.OnClock(times, &quotas_, bounds_);
  }
  EXPECT_GT(quotas_[0], 90u);
  EXPECT_LT(quotas_[1], 40u);
}

TEST_F(NumericalBatchSearchTest, LoadChangeAfterBalanceRestartsTheApproach) {
  search_.Reset(2);
  quotas_ = {{0, 64}, {1, 64}};
  Run(200, {{0, 1}, {1, 1}});
  EXPECT_EQ(search_.phase(), Phase::kBalanced);
  EXPECT_EQ(search_.moves(), 0u);
  Run(static_cast<int>(search_.window()), {{0, 1}, {1, 3}});
  EXPECT_EQ(search_.phase(), Phase::kFastApproach);
  EXPECT_EQ(search_.step(), 32u);
  EXPECT_THAT(quotas_, ElementsAre(Pair(0, 96), Pair(1, 32)));
}

TEST_F(NumericalBatchSearchTest, ALoadChangeAfterSettlingIsFollowedQuickly) {
  // Each worker's clock costs a fixed part (its link) plus its samples,
  // with +-4% of deterministic noise. Once the search settled, worker 0's
  // link slows by 10 ms — at each clock of a window in turn, as a window
  // that straddles the change shows only part of it.
  const std::vector<double> per_sample = {0.0001, 0.00033, 0.00036, 0.00064};
  int slowest = 0;
  for (int offset = 0; offset < 24; ++offset) {
    NumericalBatchSearch search(128, {});
    search.Reset(4);
    std::map<uint32_t, uint32_t> quotas = {{0, 32}, {1, 32}, {2, 32}, {3, 32}};
    std::vector<double> fixed = {0.007, 0.007, 0.007, 0.007};
    uint64_t noise = 12345;
    auto run_clock = [&] {
      std::map<uint32_t, double> times;
      for (const auto& [w, q] : quotas) {
        noise = noise * 6364136223846793005ULL + 1442695040888963407ULL;
        const double unit = static_cast<double>(noise >> 11) * 0x1.0p-53;
        times[w] = (fixed[w] + per_sample[w] * q) * (1 + 0.08 * (unit - 0.5));
      }
      search.OnClock(times, &quotas, bounds_);
    };
    for (int c = 0; c < 300 + offset; ++c) run_clock();
    ASSERT_NE(search.phase(), Phase::kFastApproach);
    ASSERT_GT(quotas.at(0), 65u);  // balanced: 74 for the fastest
    fixed[0] += 0.010;
    // Balanced for the new link: worker 0 near 31 samples.
    int clocks = 0;
    while (quotas.at(0) > 40 && clocks < 1000) {
      run_clock();
      ++clocks;
    }
    slowest = std::max(slowest, clocks);
    uint32_t sum = 0;
    for (const auto& [w, q] : quotas) sum += q;
    EXPECT_EQ(sum, 128u);
  }
  std::cout << "[ RESULT   ] re-balanced within " << slowest << " clocks"
            << std::endl;
  EXPECT_LT(slowest, 80);
}

TEST_F(NumericalBatchSearchTest, MissingReportsDelayTheWindow) {
  search_.Reset(2);
  quotas_ = {{0, 64}, {1, 64}};
  for (int c = 0; c < 5; ++c) {
    EXPECT_FALSE(search_.OnClock({{0, 1.0}}, &quotas_, bounds_));
  }
}

}  // namespace
}  // namespace lockstep
