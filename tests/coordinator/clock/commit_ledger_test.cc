#include "coordinator/clock/commit_ledger.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

TEST(CommitLedgerTest, CommitSumsTheListedWorkersBatchWeighted) {
  CommitLedger ledger(2);
  ledger.Report(0, 0, 10, 1.0);
  ledger.Report(0, 1, 30, 2.0);
  ledger.Report(0, 2, 60, 9.0);  // a backup worker left out of the commit
  const auto totals = ledger.Commit(0, {0, 1});
  EXPECT_EQ(totals.samples, 40u);
  EXPECT_DOUBLE_EQ(totals.mean_loss, (10 * 1.0 + 30 * 2.0) / 40);
}

TEST(CommitLedgerTest, ALossThatIsNotFiniteIsLeftOutOfTheMean) {
  CommitLedger ledger(1);
  ledger.Report(0, 0, 10, 1.0);
  ledger.Report(0, 1, 30, NAN);      // a worker whose forward turned NaN
  ledger.Report(0, 2, 0, INFINITY);  // its push refused: batch 0
  const auto totals = ledger.Commit(0, {0, 1, 2});
  EXPECT_EQ(totals.samples, 40u);
  EXPECT_DOUBLE_EQ(totals.mean_loss, 1.0);
  ledger.Report(1, 1, 30, NAN);
  EXPECT_TRUE(std::isnan(ledger.Commit(1, {1}).mean_loss));
}

TEST(CommitLedgerTest, ACommitSettlesEveryEarlierClock) {
  CommitLedger ledger(1);
  ledger.Report(0, 0, 8, 1.0);
  ledger.Report(1, 0, 8, 1.0);
  ledger.Report(2, 0, 8, 1.0);
  EXPECT_EQ(ledger.pending_clocks(), 3u);
  ledger.Commit(1, {0});
  EXPECT_EQ(ledger.pending_clocks(), 1u);  // clock 0 went with it
  // A late report of a committed clock counts for nothing.
  const auto late = ledger.Commit(0, {0});
  EXPECT_EQ(late.samples, 0u);
  EXPECT_TRUE(std::isnan(late.mean_loss));
}

TEST(CommitLedgerTest, AReportOfTheSameClockReplacesTheFirst) {
  CommitLedger ledger(1);
  ledger.Report(4, 3, 8, 1.0);
  ledger.Report(4, 3, 16, 3.0);
  const auto totals = ledger.Commit(4, {3});
  EXPECT_EQ(totals.samples, 16u);
  EXPECT_DOUBLE_EQ(totals.mean_loss, 3.0);
}

TEST(CommitLedgerTest, AClockIsAppliedWhenEveryShardAcknowledged) {
  CommitLedger ledger(3);
  EXPECT_EQ(ledger.fully_applied(), -1);
  EXPECT_FALSE(ledger.Ack(0, 0));
  EXPECT_FALSE(ledger.Ack(1, 0));  // acks of clocks interleave
  EXPECT_FALSE(ledger.Ack(0, 1));
  // A shard's second ack (a promoted backup's, of a clock its lost
  // primary acknowledged too) counts once.
  EXPECT_FALSE(ledger.Ack(0, 1));
  EXPECT_TRUE(ledger.Ack(0, 2));
  EXPECT_EQ(ledger.fully_applied(), 0);
  EXPECT_FALSE(ledger.Ack(0, 2));  // settled: ignored
  EXPECT_FALSE(ledger.Ack(1, 1));
  EXPECT_TRUE(ledger.Ack(1, 2));
  EXPECT_EQ(ledger.fully_applied(), 1);
}

}  // namespace
}  // namespace lockstep
