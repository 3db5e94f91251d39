#include "sync_policies/bsp_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/sync_policies/bsp_policy_fixture.h"
#include "tests/test_seed.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST_F(BspPolicyTest, CommitsOnlyAfterAllLiveWorkersReport) {
  BspPolicy policy({32});
  JoinAll(&policy, 3);
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  EXPECT_THAT(Report(&policy, 2, 0), IsEmpty());
  EXPECT_EQ(policy.committed_clock(), -1);
  const auto commits = Report(&policy, 1, 0);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].clock, 0);
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 1u, 2u));
  EXPECT_EQ(policy.committed_clock(), 0);
}

TEST_F(BspPolicyTest, MayStartWaitsForThePreviousClockToCommit) {
  BspPolicy policy({32});
  JoinAll(&policy, 2);
  EXPECT_TRUE(MayStart(&policy, 0, 0));
  EXPECT_TRUE(MayStart(&policy, 1, 0));
  EXPECT_FALSE(MayStart(&policy, 0, 1));
  for (int64_t c = 0; c < 5; ++c) {
    (void)Report(&policy, 0, c);
    EXPECT_FALSE(MayStart(&policy, 0, c + 1)) << "clock " << c + 1;
    EXPECT_FALSE(MayStart(&policy, 1, c + 1)) << "clock " << c + 1;
    ASSERT_THAT(Report(&policy, 1, c), ::testing::SizeIs(1));
    EXPECT_TRUE(MayStart(&policy, 0, c + 1));
    EXPECT_TRUE(MayStart(&policy, 1, c + 1));
    EXPECT_FALSE(MayStart(&policy, 0, c + 2));
  }
}

TEST_F(BspPolicyTest, NeverCommitsAClockBeforeEveryWorkerReportedIt) {
  std::mt19937_64 rng(TestSeed());
  for (uint32_t workers = 1; workers <= 8; ++workers) {
    SCOPED_TRACE("workers=" + std::to_string(workers));
    BspPolicy policy({32});
    JoinAll(&policy, workers);
    std::vector<uint32_t> order(workers);
    for (uint32_t w = 0; w < workers; ++w) order[w] = w;
    for (int64_t clock = 0; clock < 60; ++clock) {
      std::shuffle(order.begin(), order.end(), rng);
      for (uint32_t i = 0; i < workers; ++i) {
        ASSERT_TRUE(MayStart(&policy, order[i], clock));
        const auto commits = Report(&policy, order[i], clock);
        if (i + 1 < workers) {
          ASSERT_THAT(commits, IsEmpty())
              << "clock " << clock << " committed after " << i + 1 << " of "
              << workers << " reports";
          ASSERT_FALSE(MayStart(&policy, order[i], clock + 1));
        } else {
          ASSERT_EQ(commits.size(), 1u) << "clock " << clock;
          EXPECT_EQ(commits[0].clock, clock);
          EXPECT_EQ(commits[0].workers.size(), workers);
        }
      }
    }
    EXPECT_EQ(policy.committed_clock(), 59);
  }
}

TEST_F(BspPolicyTest, ShuffledReportsAcrossClocksCommitInOrderWhenComplete) {
  std::mt19937_64 rng(TestSeed());
  for (int round = 0; round < 40; ++round) {
    const uint32_t workers = 1 + round % 8;
    const int64_t clocks = 25;
    SCOPED_TRACE("round=" + std::to_string(round) +
                 " workers=" + std::to_string(workers));
    BspPolicy policy({16});
    Referee referee;
    JoinAll(&policy, workers);
    for (uint32_t w = 0; w < workers; ++w) referee.live.insert(w);
    // Every (worker, clock) report once, plus some duplicates, in any order.
    std::vector<std::pair<uint32_t, int64_t>> reports;
    for (uint32_t w = 0; w < workers; ++w) {
      for (int64_t c = 0; c < clocks; ++c) reports.push_back({w, c});
    }
    const size_t unique = reports.size();
    for (size_t i = 0; i < unique / 4; ++i) {
      const auto again = reports[rng() % unique];
      reports.push_back(again);
    }
    std::shuffle(reports.begin(), reports.end(), rng);
    for (const auto& [w, c] : reports) {
      referee.Report(w, c);
      const auto commits = Report(&policy, w, c);
      ASSERT_NO_FATAL_FAILURE(referee.Check(commits, policy))
          << "after worker " << w << " reported clock " << c;
    }
    EXPECT_EQ(policy.committed_clock(), clocks - 1);
  }
}

TEST_F(BspPolicyTest, DuplicateReportsAreIgnored) {
  BspPolicy policy({32});
  JoinAll(&policy, 2);
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty()) << "one worker is not all";
  const auto commits = Report(&policy, 1, 0);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 1u));
}

TEST_F(BspPolicyTest, LateReportsOfCommittedClocksAreIgnored) {
  BspPolicy policy({32});
  JoinAll(&policy, 2);
  (void)Report(&policy, 0, 0);
  ASSERT_THAT(Report(&policy, 1, 0), ::testing::SizeIs(1));
  EXPECT_THAT(Report(&policy, 1, 0), IsEmpty());
  EXPECT_THAT(Report(&policy, 0, -3), IsEmpty());
  EXPECT_EQ(policy.committed_clock(), 0);
  // Clock 1 still needs both workers.
  EXPECT_THAT(Report(&policy, 0, 1), IsEmpty());
  EXPECT_THAT(Clocks(Report(&policy, 1, 1)), ElementsAre(1));
}

TEST_F(BspPolicyTest, CommitsComeOutInClockOrderWithoutGaps) {
  BspPolicy policy({32});
  JoinAll(&policy, 2);
  EXPECT_THAT(Report(&policy, 0, 1), IsEmpty());
  EXPECT_THAT(Report(&policy, 1, 1), IsEmpty()) << "clock 0 is not done";
  EXPECT_THAT(Report(&policy, 1, 2), IsEmpty());
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  EXPECT_EQ(policy.committed_clock(), -1);
  EXPECT_THAT(Clocks(Report(&policy, 1, 0)), ElementsAre(0, 1));
  EXPECT_THAT(Clocks(Report(&policy, 0, 2)), ElementsAre(2));
}

TEST_F(BspPolicyTest, NothingCommitsWithoutLiveWorkers) {
  BspPolicy policy({32});
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  JoinAll(&policy, 1);
  EXPECT_THAT(policy.OnWorkerLeft(0), IsEmpty());
  EXPECT_EQ(policy.committed_clock(), -1);
}

TEST_F(BspPolicyTest, QuotaFollowsThePerWorkerBatchList) {
  BspPolicy policy({16, 32, 64});
  JoinAll(&policy, 3);
  policy.OnWorkerJoined(5, 0, {});
  EXPECT_EQ(Quota(&policy, 0), 16u);
  EXPECT_EQ(Quota(&policy, 1), 32u);
  EXPECT_EQ(Quota(&policy, 2), 64u);
  EXPECT_EQ(Quota(&policy, 5), 64u) << "beyond the list: last entry";
}

TEST_F(BspPolicyTest, SingleEntryBatchListAppliesToEveryWorker) {
  BspPolicy policy({48});
  JoinAll(&policy, 4);
  for (uint32_t w = 0; w < 4; ++w) {
    EXPECT_EQ(Quota(&policy, w), 48u) << "worker " << w;
  }
}

TEST_F(BspPolicyTest, BatchOffsetsAreFixedForTheClockUnderWay) {
  BspPolicy policy({16, 32, 64, 8});
  JoinAll(&policy, 4);
  EXPECT_EQ(policy.Admit(0, 0)->batch_offset, 0u);
  EXPECT_EQ(policy.Admit(2, 0)->batch_offset, 48u);
  EXPECT_THAT(policy.OnWorkerLeft(1), IsEmpty());
  // w1's slice [16, 48) goes unread; w3 keeps [112, 120) instead of moving
  // onto w2's [64, 112) (as lower-ranked live batches would put it).
  EXPECT_EQ(policy.Admit(3, 0)->batch_offset, 112u);
  // w1 re-joins mid-clock: it still has its slice, so it runs this clock.
  policy.OnWorkerJoined(1, 0, {});
  EXPECT_EQ(policy.Admit(1, 0)->batch_offset, 16u);
  // A newcomer has none: it waits for clock 1, which clock 0 does not
  // wait for.
  policy.OnWorkerJoined(4, 0, {});
  EXPECT_FALSE(policy.Admit(4, 0).has_value());
  for (uint32_t w : {0u, 1u, 2u}) EXPECT_THAT(Report(&policy, w, 0), IsEmpty());
  EXPECT_THAT(Report(&policy, 3, 0), ::testing::SizeIs(1));
  // Clock 1 is planned afresh among its workers, in rank order.
  EXPECT_EQ(policy.Admit(4, 1)->batch_offset, 120u);
  EXPECT_EQ(policy.Admit(3, 1)->batch_offset, 112u);
}

TEST_F(BspPolicyTest, UnknownWorkerIsDeferred) {
  BspPolicy policy({32});
  JoinAll(&policy, 2);
  EXPECT_FALSE(policy.Admit(7, 0).has_value());
  EXPECT_THAT(policy.OnWorkerLeft(1), IsEmpty());
  EXPECT_FALSE(policy.Admit(1, 0).has_value()) << "departed";
}

TEST_F(BspPolicyTest, OldRequestJumpsToTheCurrentClock) {
  BspPolicy policy({32});
  JoinAll(&policy, 2);
  for (int64_t c = 0; c < 3; ++c) {
    (void)Report(&policy, 0, c);
    (void)Report(&policy, 1, c);
  }
  const auto decision = policy.Admit(1, 0);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->clock, 3);
  EXPECT_EQ(policy.CurrentClock(), 3);
}

TEST_F(BspPolicyTest, MetricsShowTheCommittedClockAndQuotas) {
  BspPolicy policy({16, 32});
  JoinAll(&policy, 2);
  (void)Report(&policy, 0, 0);
  (void)Report(&policy, 1, 0);
  const auto m = policy.Metrics();
  EXPECT_EQ(m.at("lockstep_committed_clock"), 0);
  EXPECT_EQ(m.at("lockstep_live_workers"), 2);
  EXPECT_EQ(m.at("lockstep_quota{worker=\"1\"}"), 32);
}

TEST_F(BspPolicyTest, NameAndApplyMode) {
  BspPolicy policy({32});
  EXPECT_EQ(policy.name(), "bsp");
  EXPECT_EQ(policy.apply_mode(), ApplyMode::kOnCommit);
}

}  // namespace
}  // namespace lockstep
