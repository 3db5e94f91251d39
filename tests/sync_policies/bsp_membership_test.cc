#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sync_policies/bsp_policy.h"
#include "tests/sync_policies/bsp_policy_fixture.h"
#include "tests/test_seed.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST_F(BspPolicyTest, RandomDeparturesNeverBlockOrCorruptCommits) {
  std::mt19937_64 rng(TestSeed());
  for (int round = 0; round < 60; ++round) {
    const uint32_t workers = 2 + round % 7;
    SCOPED_TRACE("round=" + std::to_string(round) +
                 " workers=" + std::to_string(workers));
    BspPolicy policy({16});
    Referee referee;
    JoinAll(&policy, workers);
    for (uint32_t w = 0; w < workers; ++w) referee.live.insert(w);
    std::vector<int64_t> next(workers, 0);  // next clock each worker runs
    for (int step = 0; step < 400; ++step) {
      const uint32_t w = static_cast<uint32_t>(rng() % workers);
      const bool live = referee.live.count(w) != 0;
      if (live && referee.live.size() > 1 && rng() % 25 == 0) {
        referee.live.erase(w);
        const auto commits = policy.OnWorkerLeft(w);
        ASSERT_NO_FATAL_FAILURE(referee.Check(commits, policy))
            << "after worker " << w << " left";
      } else if (live && MayStart(&policy, w, next[w])) {
        referee.Report(w, next[w]);
        const auto commits = Report(&policy, w, next[w]);
        ++next[w];
        ASSERT_NO_FATAL_FAILURE(referee.Check(commits, policy))
            << "after worker " << w << " reported clock " << next[w] - 1;
      } else if (!live) {
        // A stale report from a departed worker must not count.
        const auto commits = Report(&policy, w, next[w]++);
        ASSERT_NO_FATAL_FAILURE(referee.Check(commits, policy))
            << "after departed worker " << w << " reported";
      }
    }
    // Finish the clock in flight: the job never stalls.
    const int64_t last = policy.committed_clock() + 1;
    for (uint32_t w :
         std::vector<uint32_t>(referee.live.begin(), referee.live.end())) {
      if (next[w] == last) {
        referee.Report(w, last);
        ASSERT_NO_FATAL_FAILURE(
            referee.Check(Report(&policy, w, last), policy));
      }
    }
    EXPECT_EQ(policy.committed_clock(), last);
  }
}

TEST_F(BspPolicyTest, WorkerLeavingReleasesThePendingCommit) {
  BspPolicy policy({32});
  JoinAll(&policy, 3);
  (void)Report(&policy, 0, 0);
  (void)Report(&policy, 1, 0);
  EXPECT_FALSE(MayStart(&policy, 0, 1));
  const auto commits = policy.OnWorkerLeft(2);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].clock, 0);
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 1u));
  EXPECT_TRUE(MayStart(&policy, 0, 1));
}

TEST_F(BspPolicyTest, DepartedWorkerIsLeftOutOfTheCommit) {
  BspPolicy policy({32});
  JoinAll(&policy, 3);
  (void)Report(&policy, 2, 0);
  (void)Report(&policy, 0, 0);
  EXPECT_THAT(policy.OnWorkerLeft(2), IsEmpty()) << "worker 1 still owes 0";
  const auto commits = Report(&policy, 1, 0);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 1u))
      << "the departed worker's pushes must not be applied";
}

TEST_F(BspPolicyTest, LeavingReleasesEveryBufferedClockInOrder) {
  BspPolicy policy({32});
  JoinAll(&policy, 3);
  for (int64_t c = 0; c < 3; ++c) {
    EXPECT_THAT(Report(&policy, 0, c), IsEmpty());
    EXPECT_THAT(Report(&policy, 1, c), IsEmpty());
  }
  const auto commits = policy.OnWorkerLeft(2);
  EXPECT_THAT(Clocks(commits), ElementsAre(0, 1, 2));
  for (const auto& c : commits) EXPECT_THAT(c.workers, ElementsAre(0u, 1u));
  EXPECT_EQ(policy.committed_clock(), 2);
}

TEST_F(BspPolicyTest, RemainingWorkersCarryOnAfterADeparture) {
  BspPolicy policy({32});
  JoinAll(&policy, 2);
  EXPECT_THAT(policy.OnWorkerLeft(1), IsEmpty());
  const auto commits = Report(&policy, 0, 0);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_THAT(commits[0].workers, ElementsAre(0u));
}

TEST_F(BspPolicyTest, StaleReportFromADepartedWorkerDoesNotCount) {
  BspPolicy policy({32});
  JoinAll(&policy, 3);
  EXPECT_THAT(policy.OnWorkerLeft(1), IsEmpty());
  EXPECT_THAT(Report(&policy, 1, 0), IsEmpty());
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  const auto commits = Report(&policy, 2, 0);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 2u));
}

TEST_F(BspPolicyTest, RejoinedWorkerIsWaitedForAgain) {
  BspPolicy policy({32});
  JoinAll(&policy, 2);
  EXPECT_THAT(policy.OnWorkerLeft(1), IsEmpty());
  policy.OnWorkerJoined(1, 0, {});
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  const auto commits = Report(&policy, 1, 0);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 1u));
}

TEST_F(BspPolicyTest, AClockAllOfWhoseAdmittedWorkersLeftIsPlannedAfresh) {
  BspPolicy policy({16, 32, 64});
  JoinAll(&policy, 3);
  EXPECT_EQ(policy.Admit(1, 0)->batch_offset, 16u);
  EXPECT_THAT(policy.OnWorkerLeft(1), IsEmpty());
  // Nobody read a slice of clock 0 that counts: w2 moves up to 16.
  EXPECT_EQ(policy.Admit(2, 0)->batch_offset, 16u);
  EXPECT_EQ(policy.Admit(0, 0)->batch_offset, 0u);
}

TEST_F(BspPolicyTest, RejoiningWorkerIsAdmittedAtTheCurrentClock) {
  BspPolicy policy({32});
  JoinAll(&policy, 3);
  for (uint32_t w = 0; w < 3; ++w) (void)Report(&policy, w, 0);
  EXPECT_THAT(policy.OnWorkerLeft(2), IsEmpty());
  (void)Report(&policy, 0, 1);
  policy.OnWorkerJoined(2, policy.CurrentClock(), {});
  const auto decision = policy.Admit(2, 0);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->clock, 1);
  EXPECT_THAT(Report(&policy, 1, 1), IsEmpty()) << "clock 1 waits for w2";
  EXPECT_THAT(Clocks(Report(&policy, 2, 1)), ElementsAre(1));
}

TEST_F(BspPolicyTest, WorkerBackWithinAClockMustReportItAgain) {
  BspPolicy policy({32});
  JoinAll(&policy, 2);
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  EXPECT_THAT(policy.OnWorkerLeft(0), IsEmpty()) << "w1 still owes 0";
  policy.OnWorkerJoined(0, policy.CurrentClock(), {});
  ASSERT_EQ(policy.Admit(0, 0)->clock, 0);
  EXPECT_THAT(Report(&policy, 1, 0), IsEmpty())
      << "w0's report from before it left must not count";
  const auto commits = Report(&policy, 0, 0);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 1u));
}

}  // namespace
}  // namespace lockstep
