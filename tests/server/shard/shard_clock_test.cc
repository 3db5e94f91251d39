#include "server/shard/shard_clock.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

// A pull message tagged so the test can tell them apart.
Message Pull(const std::string& tag) {
  Message msg;
  msg.peer = tag;
  return msg;
}

BufferedPush Push(uint32_t batch) {
  BufferedPush push;
  push.batch = batch;
  return push;
}

std::vector<std::string> Tags(const std::vector<Message>& pulls) {
  std::vector<std::string> tags;
  for (const Message& m : pulls) tags.push_back(m.peer);
  return tags;
}

TEST(ShardClockTest, OnCommitAPullWaitsForThePreviousClock) {
  ShardClock clock;
  EXPECT_TRUE(clock.PullReady(0));  // clock -1 is "applied"
  EXPECT_FALSE(clock.PullReady(1));
  clock.DeferPull(2, Pull("c2"));
  clock.DeferPull(1, Pull("c1a"));
  clock.DeferPull(1, Pull("c1b"));
  EXPECT_TRUE(clock.TakeReadyPulls().empty());
  clock.FinishCommit(0);
  EXPECT_EQ(Tags(clock.TakeReadyPulls()),
            (std::vector<std::string>{"c1a", "c1b"}));  // arrival order
  EXPECT_EQ(clock.deferred_pulls(), 1u);
  clock.FinishCommit(1);
  EXPECT_EQ(Tags(clock.TakeReadyPulls()), std::vector<std::string>{"c2"});
  EXPECT_EQ(clock.deferred_pulls(), 0u);
}

TEST(ShardClockTest, OnArrivalEveryPullIsReady) {
  ShardClock clock({/*on_arrival=*/true, -1});
  EXPECT_TRUE(clock.PullReady(1000));
}

TEST(ShardClockTest, ACommitAppliesExactlyTheListedWorkersPushes) {
  ShardClock clock;
  EXPECT_EQ(clock.Buffer(0, 0, Push(8)), wire::PushStatus::Buffered);
  EXPECT_EQ(clock.Buffer(0, 1, Push(16)), wire::PushStatus::Buffered);
  EXPECT_EQ(clock.Buffer(0, 2, Push(32)), wire::PushStatus::Buffered);
  EXPECT_EQ(clock.Buffer(1, 0, Push(4)), wire::PushStatus::Buffered);
  std::vector<uint32_t> missing;
  auto pushes = clock.Committed(0, {2, 0, 5}, &missing);
  ASSERT_EQ(pushes.size(), 2u);
  EXPECT_EQ(pushes[0]->batch, 32u);  // in the commit's order
  EXPECT_EQ(pushes[1]->batch, 8u);
  EXPECT_EQ(missing, std::vector<uint32_t>{5});
  clock.FinishCommit(0, pushes.size());
  EXPECT_EQ(clock.applied(), 0);
  // Worker 1's push came before the commit that left it out (a backup
  // worker's late push): discarded, and counted as dropped.
  EXPECT_EQ(clock.dropped(), 1u);
  EXPECT_TRUE(clock.IsApplied(0));
  // The next clock's push is still there.
  missing.clear();
  EXPECT_EQ(clock.Committed(1, {0}, &missing).size(), 1u);
}

TEST(ShardClockTest, ACommitNamingARefusedPushAppliesTheOthers) {
  ShardClock clock;
  clock.Buffer(0, 0, Push(8));
  clock.Refuse(0, 1);  // worker 1's push of clock 0 was poisoned
  clock.Refuse(1, 1);
  std::vector<uint32_t> missing;
  auto pushes = clock.Committed(0, {0, 1, 2}, &missing);
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0]->batch, 8u);
  EXPECT_EQ(missing, std::vector<uint32_t>{2}) << "refused is not missing";
  clock.FinishCommit(0, pushes.size());
  EXPECT_EQ(clock.dropped(), 0u) << "a refusal is not a drop";
  // The refusal of clock 1 stays until clock 1 is applied, then goes.
  missing.clear();
  EXPECT_TRUE(clock.Committed(1, {1}, &missing).empty());
  EXPECT_TRUE(missing.empty());
  clock.FinishCommit(1);
  clock.Buffer(5, 0, Push(8));
  clock.FinishCommit(4);
  missing.clear();
  clock.Committed(1, {1}, &missing);
  EXPECT_EQ(missing, std::vector<uint32_t>{1});
}

TEST(ShardClockTest, APushForACommittedClockIsLateAndDropped) {
  ShardClock clock;
  clock.FinishCommit(3);
  EXPECT_EQ(clock.Buffer(3, 1, Push(8)), wire::PushStatus::Dropped);
  EXPECT_EQ(clock.Buffer(2, 1, Push(8)), wire::PushStatus::Dropped);
  EXPECT_EQ(clock.dropped(), 2u);
  EXPECT_EQ(clock.Buffer(4, 1, Push(8)), wire::PushStatus::Buffered);
}

TEST(ShardClockTest, ADuplicatePushKeepsTheFirst) {
  ShardClock clock;
  clock.Buffer(0, 1, Push(8));
  clock.Buffer(0, 1, Push(99));
  std::vector<uint32_t> missing;
  auto pushes = clock.Committed(0, {1}, &missing);
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0]->batch, 8u);
}

TEST(ShardClockTest, OnArrivalStalenessIsLogicalClocksSinceThePull) {
  ShardClock clock({/*on_arrival=*/true, /*max_staleness=*/2});
  int64_t staleness = -1;
  EXPECT_EQ(clock.Admit(10, 8, &staleness), wire::PushStatus::Applied);
  EXPECT_EQ(staleness, 2);
  EXPECT_EQ(clock.Admit(10, 7, &staleness), wire::PushStatus::Dropped);
  EXPECT_EQ(staleness, 3);
  EXPECT_EQ(clock.Admit(10, 12, &staleness), wire::PushStatus::Applied);
  EXPECT_EQ(staleness, 0);  // a reader ahead of this shard is not stale
  EXPECT_EQ(clock.dropped(), 1u);
  clock.MarkApplied(5);
  clock.MarkApplied(4);  // out of order: the applied clock never goes back
  EXPECT_EQ(clock.applied(), 5);
}

TEST(ShardClockTest, WithoutALimitNothingIsTooStale) {
  ShardClock clock({/*on_arrival=*/true, -1});
  int64_t staleness = 0;
  EXPECT_EQ(clock.Admit(1000000, 0, &staleness), wire::PushStatus::Applied);
  EXPECT_EQ(clock.dropped(), 0u);
}

TEST(ShardClockTest,
     StalenessScalingWeighsTheGradientByOneOverStalenessPlusOne) {
  ShardClock plain({/*on_arrival=*/true, -1, /*scale_lr=*/false});
  EXPECT_DOUBLE_EQ(plain.GradScale(3), 1.0);  // nothing unscaled
  ShardClock scaled({/*on_arrival=*/true, -1, /*scale_lr=*/true});
  EXPECT_DOUBLE_EQ(scaled.GradScale(0), 1.0);
  EXPECT_DOUBLE_EQ(scaled.GradScale(3), 0.25);
  EXPECT_DOUBLE_EQ(scaled.GradScale(-2), 1.0);  // never above 1
}

TEST(ShardClockTest, ADecidedVerdictIsFollowedAndADropCounted) {
  // Another shard measured the staleness (wire::PushVerdict): this one
  // follows it, whatever its own versions say.
  ShardClock clock({/*on_arrival=*/true, /*max_staleness=*/0});
  EXPECT_EQ(clock.Decided(true), wire::PushStatus::Applied);
  EXPECT_EQ(clock.Decided(false), wire::PushStatus::Dropped);
  EXPECT_EQ(clock.dropped(), 1u);
}

}  // namespace
}  // namespace lockstep
