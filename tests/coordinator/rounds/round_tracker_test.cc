#include "coordinator/rounds/round_tracker.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

ManifestRound Started(uint64_t round, int64_t clock, uint32_t shards,
                      double unix_time = 0) {
  ManifestRound r;
  r.round = round;
  r.clock = clock;
  r.shards = shards;
  r.unix_time = unix_time;
  return r;
}

TEST(RoundTrackerTest, DueEveryKClocksAfterTheLastRound) {
  RoundTracker t(10, 0, 0);
  EXPECT_FALSE(t.Due(8, 0));
  EXPECT_TRUE(t.Due(9, 0));
  t.Begin(Started(1, 9, 2, 0), 0);
  EXPECT_FALSE(t.Due(19, 0)) << "a round is in flight";
  t.Report(1, 0, true, "", 1, {});
  t.Report(1, 1, true, "", 1, {});
  EXPECT_FALSE(t.Due(9, 0)) << "never twice for one clock";
  EXPECT_FALSE(t.Due(18, 0));
  // Late (the round was in flight at 19): as soon as possible after.
  EXPECT_TRUE(t.Due(21, 0));
}

TEST(RoundTrackerTest, DueEveryTSecondsAndAfterAResumedClock) {
  RoundTracker timed(0, 5, 100);
  EXPECT_FALSE(timed.Due(3, 104.9));
  EXPECT_TRUE(timed.Due(3, 105));
  RoundTracker resumed(10, 0, 0, /*start_clock=*/29);
  EXPECT_FALSE(resumed.Due(30, 0));
  EXPECT_TRUE(resumed.Due(39, 0));
}

TEST(RoundTrackerTest, CompleteOnlyWhenEveryShardReportedDurable) {
  RoundTracker t(1, 0, 0);
  ManifestRound started = Started(7, 4, 3, 1.5e9);
  started.train_s = 12.5;
  started.samples = 640;
  t.Begin(started, 0);
  EXPECT_FALSE(t.Report(7, 0, true, "", 10, {{0, 4}}));
  EXPECT_FALSE(t.Report(7, 0, true, "", 10, {})) << "a repeat";
  EXPECT_FALSE(t.Report(6, 1, true, "", 10, {})) << "another round";
  EXPECT_FALSE(t.Report(7, 9, true, "", 10, {})) << "no such shard";
  EXPECT_FALSE(t.Report(7, 1, true, "", 20, {}));
  auto done = t.Report(7, 2, true, "", 30, {});
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->complete);
  EXPECT_EQ(done->round, 7u);
  EXPECT_EQ(done->clock, 4);
  EXPECT_EQ(done->shards, 3u);
  EXPECT_EQ(done->bytes, 60u);
  EXPECT_EQ(done->contained.at(0).at(0), 4);
  EXPECT_EQ(done->train_s, 12.5) << "the run's progress, as begun";
  EXPECT_EQ(done->samples, 640u);
  EXPECT_FALSE(t.in_flight());
}

TEST(RoundTrackerTest, OneFailedShardFailsTheRoundNamingIt) {
  RoundTracker t(1, 0, 0);
  t.Begin(Started(2, 0, 2, 0), 0);
  EXPECT_FALSE(t.Report(2, 1, false, "No space left on device", 0, {}));
  auto done = t.Report(2, 0, true, "", 5, {});
  ASSERT_TRUE(done);
  EXPECT_FALSE(done->complete);
  EXPECT_EQ(done->error, "shard 1: No space left on device");
}

TEST(RoundTrackerTest, AbandonFailsTheRoundInFlight) {
  RoundTracker t(1, 0, 0);
  EXPECT_FALSE(t.Abandon("why"));
  t.Begin(Started(3, 0, 2, 0), 0);
  auto gone = t.Abandon("shard 1 died");
  ASSERT_TRUE(gone);
  EXPECT_FALSE(gone->complete);
  EXPECT_EQ(gone->error, "shard 1 died");
  EXPECT_FALSE(t.in_flight());
}

}  // namespace
}  // namespace lockstep
