#include "sync_policies/backup_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/test_seed.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class BackupPolicyTest : public ::testing::Test {
 protected:
  static void JoinAll(BackupPolicy* policy, uint32_t workers) {
    for (uint32_t w = 0; w < workers; ++w) policy->OnWorkerJoined(w, 0, {});
  }

  static std::vector<CommitDecision> Report(BackupPolicy* policy,
                                            uint32_t worker, int64_t clock) {
    ClockReport report;
    report.worker = worker;
    report.clock = clock;
    return policy->OnClockDone(report);
  }

  static double Dropped(const BackupPolicy& policy, uint32_t worker) {
    return policy.Metrics().at(
        "lockstep_worker_dropped_pushes_total{worker=\"" +
        std::to_string(worker) + "\"}");
  }
};

TEST_F(BackupPolicyTest, CommitsTheFirstNMinusBReporters) {
  BackupPolicy policy({32}, 1);
  JoinAll(&policy, 4);
  EXPECT_THAT(Report(&policy, 3, 0), IsEmpty());
  EXPECT_THAT(Report(&policy, 1, 0), IsEmpty());
  const auto commits = Report(&policy, 2, 0);
  ASSERT_THAT(commits, SizeIs(1));
  EXPECT_EQ(commits[0].clock, 0);
  EXPECT_THAT(commits[0].workers, ElementsAre(1u, 2u, 3u));
}

TEST_F(BackupPolicyTest, LateReportIsDroppedAndCounted) {
  BackupPolicy policy({32}, 1);
  JoinAll(&policy, 3);
  (void)Report(&policy, 0, 0);
  ASSERT_THAT(Report(&policy, 1, 0), SizeIs(1));
  EXPECT_THAT(Report(&policy, 2, 0), IsEmpty());
  EXPECT_EQ(policy.dropped_total(), 1u);
  EXPECT_EQ(Dropped(policy, 2), 1);
  EXPECT_EQ(Dropped(policy, 0), 0);
  EXPECT_EQ(policy.Metrics().at("lockstep_dropped_pushes_total"), 1);
}

TEST_F(BackupPolicyTest, DuplicateReportIsNeitherCountedTwiceNorDropped) {
  BackupPolicy policy({32}, 1);
  JoinAll(&policy, 3);
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty()) << "one worker, not two";
  ASSERT_THAT(Report(&policy, 1, 0), SizeIs(1));
  EXPECT_THAT(Report(&policy, 1, 0), IsEmpty());
  EXPECT_EQ(policy.dropped_total(), 0u);
}

TEST_F(BackupPolicyTest, LateWorkerJumpsToTheCurrentClock) {
  BackupPolicy policy({32}, 1);
  JoinAll(&policy, 3);
  for (int64_t c = 0; c < 3; ++c) {
    (void)Report(&policy, 0, c);
    ASSERT_THAT(Report(&policy, 1, c), SizeIs(1));
  }
  (void)Report(&policy, 2, 0);
  const auto decision = policy.Admit(2, 1);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->clock, 3);
  EXPECT_FALSE(policy.Admit(0, 4).has_value());
}

TEST_F(BackupPolicyTest, AdmitsClockCOnlyAfterCMinusOneCommits) {
  BackupPolicy policy({32}, 1);
  JoinAll(&policy, 3);
  EXPECT_TRUE(policy.Admit(0, 0).has_value());
  EXPECT_FALSE(policy.Admit(0, 1).has_value());
  (void)Report(&policy, 0, 0);
  EXPECT_FALSE(policy.Admit(0, 1).has_value());
  (void)Report(&policy, 1, 0);
  EXPECT_TRUE(policy.Admit(0, 1).has_value());
  EXPECT_EQ(policy.CurrentClock(), 1);
}

TEST_F(BackupPolicyTest, LeavingShrinksNAndReleasesTheClock) {
  BackupPolicy policy({32}, 1);
  JoinAll(&policy, 4);
  (void)Report(&policy, 0, 0);
  (void)Report(&policy, 1, 0);
  const auto commits = policy.OnWorkerLeft(3);
  ASSERT_THAT(commits, SizeIs(1)) << "N = 3 now: 2 reports suffice";
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 1u));
}

TEST_F(BackupPolicyTest, DepartedReporterNoLongerCounts) {
  BackupPolicy policy({32}, 1);
  JoinAll(&policy, 4);
  (void)Report(&policy, 0, 0);
  (void)Report(&policy, 1, 0);
  EXPECT_THAT(policy.OnWorkerLeft(0), IsEmpty()) << "N = 3 needs 2; 1 left";
  const auto commits = Report(&policy, 2, 0);
  ASSERT_THAT(commits, SizeIs(1));
  EXPECT_THAT(commits[0].workers, ElementsAre(1u, 2u));
}

TEST_F(BackupPolicyTest, AtLeastOneReportIsAlwaysNeeded) {
  BackupPolicy policy({32}, 3);
  JoinAll(&policy, 2);
  const auto commits = Report(&policy, 1, 0);
  ASSERT_THAT(commits, SizeIs(1));
  EXPECT_THAT(commits[0].workers, ElementsAre(1u));
  EXPECT_THAT(policy.OnWorkerLeft(0), IsEmpty());
  EXPECT_THAT(policy.OnWorkerLeft(1), IsEmpty()) << "nothing to commit";
}

TEST_F(BackupPolicyTest, ZeroBackupsWaitsForEveryone) {
  BackupPolicy policy({32}, 0);
  JoinAll(&policy, 3);
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  EXPECT_THAT(Report(&policy, 2, 0), IsEmpty());
  EXPECT_THAT(Report(&policy, 1, 0), SizeIs(1));
}

TEST_F(BackupPolicyTest, JoinerCountsFromItsJoinClock) {
  BackupPolicy policy({32}, 1);
  JoinAll(&policy, 2);
  ASSERT_THAT(Report(&policy, 0, 0), SizeIs(1));
  policy.OnWorkerJoined(2, policy.CurrentClock(), {});
  EXPECT_EQ(policy.Admit(2, 0)->clock, 1);
  EXPECT_THAT(Report(&policy, 0, 1), IsEmpty()) << "N = 3 needs 2";
  EXPECT_THAT(Report(&policy, 2, 1), SizeIs(1));
}

TEST_F(BackupPolicyTest, WorkerBackWithinAClockReportsAfresh) {
  BackupPolicy policy({32}, 0);
  JoinAll(&policy, 2);
  EXPECT_THAT(Report(&policy, 0, 0), IsEmpty());
  EXPECT_THAT(policy.OnWorkerLeft(0), IsEmpty());
  policy.OnWorkerJoined(0, policy.CurrentClock(), {});
  EXPECT_THAT(Report(&policy, 1, 0), IsEmpty()) << "its old report is gone";
  const auto commits = Report(&policy, 0, 0);
  ASSERT_THAT(commits, SizeIs(1)) << "the new report counts";
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 1u));
}

TEST_F(BackupPolicyTest, RandomArrivalOrdersCommitTheFirstReporters) {
  std::mt19937_64 rng(TestSeed());
  for (uint32_t backups = 0; backups < 3; ++backups) {
    BackupPolicy policy({32}, backups);
    JoinAll(&policy, 5);
    const size_t needed = 5 - backups;
    uint64_t late = 0;
    std::vector<uint32_t> order = {0, 1, 2, 3, 4};
    for (int64_t c = 0; c < 50; ++c) {
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t i = 0; i < order.size(); ++i) {
        const auto commits = Report(&policy, order[i], c);
        if (i + 1 < needed) {
          ASSERT_THAT(commits, IsEmpty());
        } else if (i + 1 == needed) {
          ASSERT_THAT(commits, SizeIs(1));
          std::vector<uint32_t> first(order.begin(), order.begin() + needed);
          std::sort(first.begin(), first.end());
          ASSERT_EQ(commits[0].workers, first);
        } else {
          ASSERT_THAT(commits, IsEmpty());
          ++late;
        }
      }
    }
    EXPECT_EQ(policy.dropped_total(), late) << "B=" << backups;
  }
}

TEST_F(BackupPolicyTest, NameAndApplyMode) {
  BackupPolicy policy({32}, 2);
  EXPECT_EQ(policy.name(), "backup:2");
  EXPECT_EQ(policy.apply_mode(), ApplyMode::kOnCommit);
}

}  // namespace
}  // namespace lockstep
