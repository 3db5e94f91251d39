#include "sync_policies/ssp_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sync_policies/bsp_policy.h"
#include "tests/test_seed.h"

namespace lockstep {
namespace {

using ::testing::IsEmpty;

class SspPolicyTest : public ::testing::Test {
 protected:
  static void JoinAll(SyncPolicy* policy, uint32_t workers) {
    for (uint32_t w = 0; w < workers; ++w) policy->OnWorkerJoined(w, 0, {});
  }

  static std::vector<CommitDecision> Report(SyncPolicy* policy, uint32_t worker,
                                            int64_t clock) {
    ClockReport report;
    report.worker = worker;
    report.clock = clock;
    report.batch = 32;
    report.compute_s = 0.01;
    return policy->OnClockDone(report);
  }

  static double Metric(const SyncPolicy& policy, const std::string& key) {
    return policy.Metrics().at(key);
  }
};

TEST_F(SspPolicyTest, FastWorkerRunsAtMostSClocksAhead) {
  SspPolicy policy({32}, 2);
  JoinAll(&policy, 2);
  for (int64_t c = 0; c <= 2; ++c) {
    ASSERT_TRUE(policy.Admit(0, c).has_value()) << "clock " << c;
    EXPECT_THAT(Report(&policy, 0, c), IsEmpty());
  }
  EXPECT_FALSE(policy.Admit(0, 3).has_value())
      << "w1 has completed 0 clocks; 3 - 2 > 0";
  (void)Report(&policy, 1, 0);
  EXPECT_TRUE(policy.Admit(0, 3).has_value());
  EXPECT_FALSE(policy.Admit(0, 4).has_value());
}

TEST_F(SspPolicyTest, ZeroStalenessIsLockstep) {
  SspPolicy policy({32}, 0);
  JoinAll(&policy, 3);
  (void)Report(&policy, 0, 0);
  (void)Report(&policy, 1, 0);
  EXPECT_FALSE(policy.Admit(0, 1).has_value());
  (void)Report(&policy, 2, 0);
  EXPECT_TRUE(policy.Admit(0, 1).has_value());
}

TEST_F(SspPolicyTest, ZeroStalenessAdmitsExactlyLikeBsp) {
  std::mt19937_64 rng(TestSeed());
  for (int round = 0; round < 30; ++round) {
    const uint32_t workers = 1 + round % 6;
    SCOPED_TRACE("round " + std::to_string(round));
    SspPolicy ssp({32}, 0);
    BspPolicy bsp({32});
    JoinAll(&ssp, workers);
    JoinAll(&bsp, workers);
    std::vector<int64_t> next(workers, 0);
    for (int step = 0; step < 300; ++step) {
      const auto w = static_cast<uint32_t>(rng() % workers);
      const auto a = ssp.Admit(w, next[w]);
      const auto b = bsp.Admit(w, next[w]);
      ASSERT_EQ(a.has_value(), b.has_value()) << "w" << w << "@" << next[w];
      if (!a.has_value()) continue;
      ASSERT_EQ(a->clock, b->clock);
      (void)Report(&ssp, w, next[w]);
      (void)Report(&bsp, w, next[w]);
      ++next[w];
    }
  }
}

TEST_F(SspPolicyTest, RandomRunsNeverExceedTheBound) {
  std::mt19937_64 rng(TestSeed());
  for (int64_t s : {0, 1, 3, 8}) {
    SspPolicy policy({32}, s);
    JoinAll(&policy, 5);
    std::vector<int64_t> next(5, 0);
    for (int step = 0; step < 2000; ++step) {
      const auto w = static_cast<uint32_t>(rng() % 5);
      if (!policy.Admit(w, next[w]).has_value()) {
        const int64_t min = *std::min_element(next.begin(), next.end());
        ASSERT_LT(min, next[w] - s) << "deferred without cause";
        continue;
      }
      const int64_t min = *std::min_element(next.begin(), next.end());
      ASSERT_GE(min, next[w] - s) << "s=" << s;
      ASSERT_LE(Metric(policy, "lockstep_clock_gap"), s);
      (void)Report(&policy, w, next[w]++);
    }
  }
}

TEST_F(SspPolicyTest, NeverCommits) {
  SspPolicy policy({32}, 1);
  JoinAll(&policy, 2);
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_THAT(Report(&policy, 0, c), IsEmpty());
    EXPECT_THAT(Report(&policy, 1, c), IsEmpty());
  }
  EXPECT_THAT(policy.OnWorkerLeft(0), IsEmpty());
}

TEST_F(SspPolicyTest, DepartedWorkerStopsHoldingOthersBack) {
  SspPolicy policy({32}, 1);
  JoinAll(&policy, 2);
  (void)Report(&policy, 0, 0);
  (void)Report(&policy, 0, 1);
  EXPECT_FALSE(policy.Admit(0, 2).has_value());
  EXPECT_THAT(policy.OnWorkerLeft(1), IsEmpty());
  EXPECT_TRUE(policy.Admit(0, 2).has_value());
}

TEST_F(SspPolicyTest, JoinerCountsAsHavingCompletedItsJoinClock) {
  SspPolicy policy({32}, 0);
  JoinAll(&policy, 1);
  for (int64_t c = 0; c < 5; ++c) (void)Report(&policy, 0, c);
  EXPECT_EQ(policy.CurrentClock(), 5);
  policy.OnWorkerJoined(1, policy.CurrentClock(), {});
  EXPECT_TRUE(policy.Admit(0, 5).has_value()) << "the joiner holds no one";
  const auto decision = policy.Admit(1, 0);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->clock, 5) << "moved to the current clock";
}

TEST_F(SspPolicyTest, JoinBelowTheCurrentClockIsRaised) {
  SspPolicy policy({32}, 0);
  JoinAll(&policy, 1);
  for (int64_t c = 0; c < 3; ++c) (void)Report(&policy, 0, c);
  policy.OnWorkerJoined(1, 0, {});
  EXPECT_EQ(policy.Admit(1, 0)->clock, 3);
}

TEST_F(SspPolicyTest, DeferralsAreCountedOncePerRequest) {
  SspPolicy policy({32}, 0);
  JoinAll(&policy, 2);
  (void)Report(&policy, 0, 0);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(policy.Admit(0, 1).has_value());
  EXPECT_EQ(Metric(policy, "lockstep_deferred_admissions_total"), 1);
  (void)Report(&policy, 1, 0);
  EXPECT_TRUE(policy.Admit(0, 1).has_value());
  (void)Report(&policy, 0, 1);
  EXPECT_FALSE(policy.Admit(0, 2).has_value());
  EXPECT_EQ(Metric(policy, "lockstep_deferred_admissions_total"), 2);
}

TEST_F(SspPolicyTest, MetricsShowPerWorkerClocksAndTheGap) {
  SspPolicy policy({32}, 3);
  JoinAll(&policy, 2);
  for (int64_t c = 0; c < 3; ++c) {
    ASSERT_TRUE(policy.Admit(0, c).has_value());
    (void)Report(&policy, 0, c);
  }
  ASSERT_TRUE(policy.Admit(0, 3).has_value());
  EXPECT_EQ(Metric(policy, "lockstep_worker_clock{worker=\"0\"}"), 3);
  EXPECT_EQ(Metric(policy, "lockstep_worker_clock{worker=\"1\"}"), 0);
  EXPECT_EQ(Metric(policy, "lockstep_clock_gap"), 3);
}

TEST_F(SspPolicyTest, BatchesAndOffsetsFollowTheConfiguredList) {
  SspPolicy policy({16, 32, 64}, 1);
  JoinAll(&policy, 3);
  EXPECT_EQ(policy.Admit(1, 0)->batch, 32u);
  EXPECT_EQ(policy.Admit(2, 0)->batch_offset, 48u);
}

TEST_F(SspPolicyTest, NameAndApplyMode) {
  SspPolicy policy({32}, 3);
  EXPECT_EQ(policy.name(), "ssp:3");
  EXPECT_EQ(policy.apply_mode(), ApplyMode::kOnArrival);
  EXPECT_FALSE(policy.Admit(0, 0).has_value()) << "unknown worker";
}

}  // namespace
}  // namespace lockstep
