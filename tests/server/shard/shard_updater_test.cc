#include "server/shard/shard_updater.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "common/lr_schedule.h"
#include "tests/server/shard/shard_support.h"

namespace lockstep {
namespace {

class ShardUpdaterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        model_.Build(SgdJob(), OneTensorLayout(2), 0, false, false).ok());
    updater_.Reset(SgdJob(), /*on_arrival=*/false, LrSchedule());
    updater_.Start(/*eval_every=*/0);
  }

  // A commit of `clock` applied at the constant rate `lr`.
  const wire::Commit* Commit(int64_t clock,
                             const std::vector<uint32_t>& workers, double lr) {
    updater_.set_schedule(LrSchedule::Parse("const", lr, 100).value());
    return CommitOf(clock, workers);
  }
  const wire::Commit* CommitOf(int64_t clock,
                               const std::vector<uint32_t>& workers) {
    fbb_.Clear();
    fbb_.Finish(wire::CreateCommit(fbb_, clock, fbb_.CreateVector(workers)));
    return flatbuffers::GetRoot<wire::Commit>(fbb_.GetBufferPointer());
  }

  std::vector<float> Weights() {
    std::vector<float> w(2);
    EXPECT_TRUE(model_.dense().Read({0, 2}, w.data()).ok());
    return w;
  }

  ShardModel model_;
  ShardClock clock_;
  EvalImages images_;
  ShardUpdater updater_{&model_, &clock_, &images_};
  flatbuffers::FlatBufferBuilder fbb_;
};

TEST_F(ShardUpdaterTest, ACommitAppliesItsClocksPushesOnce) {
  EXPECT_EQ(updater_.Progress(), 0);
  clock_.Buffer(0, 0, DensePush(1, {2, 0}));
  clock_.Buffer(0, 1, DensePush(1, {0, 2}));
  auto applied = updater_.ApplyCommit(*Commit(0, {0, 1}, 0.5));
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(*applied, std::optional<uint32_t>(2));
  EXPECT_EQ(Weights(), (std::vector<float>{-0.5f, -0.5f}));
  EXPECT_EQ(model_.dense().step(), 1u);
  EXPECT_EQ(updater_.Progress(), 1);
  // The coordinator's repeat of a commit changes nothing.
  auto again = updater_.ApplyCommit(*Commit(0, {0, 1}, 0.5));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
  EXPECT_EQ(Weights(), (std::vector<float>{-0.5f, -0.5f}));
}

// The rate of a commit is the job's schedule at its clock, evaluated here
// (the coordinator sends none): step:1:0.5 from 1 gives 1, then 0.5.
TEST_F(ShardUpdaterTest, ACommitAppliesTheSchedulesRateAtItsClock) {
  updater_.set_schedule(LrSchedule::Parse("step:1:0.5", 1, 10).value());
  clock_.Buffer(0, 0, DensePush(1, {2, 0}));
  ASSERT_TRUE(updater_.ApplyCommit(*CommitOf(0, {0})).ok());
  EXPECT_EQ(Weights(), (std::vector<float>{-2, 0}));
  clock_.Buffer(1, 0, DensePush(1, {2, 0}));
  ASSERT_TRUE(updater_.ApplyCommit(*CommitOf(1, {0})).ok());
  EXPECT_EQ(Weights(), (std::vector<float>{-3, 0}));
}

TEST_F(ShardUpdaterTest, AWorkerWhosePushNeverCameIsLeftOut) {
  clock_.Buffer(3, 1, DensePush(2, {4, 4}));
  clock_.FinishCommit(2);
  auto applied = updater_.ApplyCommit(*Commit(3, {0, 1}, 1));
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(*applied, std::optional<uint32_t>(1));
  EXPECT_EQ(Weights(), (std::vector<float>{-4, -4}));
}

TEST_F(ShardUpdaterTest, PushesTheRestoredRoundHoldsAreNotAppliedAgain) {
  RestoredShard restored;
  restored.clock = 4;
  restored.contained = {{0, 7}, {1, 5}};
  updater_.Restored(restored);
  EXPECT_TRUE(updater_.AlreadyContained(0, 7));
  EXPECT_TRUE(updater_.AlreadyContained(0, 6));
  EXPECT_FALSE(updater_.AlreadyContained(1, 6));  // newer: applied
  // Once a worker pushed past the round, its floor is gone.
  EXPECT_FALSE(updater_.AlreadyContained(1, 5));
  EXPECT_FALSE(updater_.AlreadyContained(2, 0));
  EXPECT_EQ(updater_.contained(), restored.contained);
  EXPECT_TRUE(clock_.IsApplied(4));
}

}  // namespace
}  // namespace lockstep
