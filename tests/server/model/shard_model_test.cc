#include "server/model/shard_model.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/server/shard/shard_support.h"

namespace lockstep {
namespace {

std::vector<float> Weights(const ShardModel& model) {
  std::vector<float> w(model.dense().range().size());
  EXPECT_TRUE(model.dense().Read(model.dense().range(), w.data()).ok());
  return w;
}

TEST(ShardModelTest, AppliesTheBatchWeightedMeanOfThePushes) {
  ShardModel model;
  ASSERT_TRUE(model.Build(SgdJob(), OneTensorLayout(3), 0, false, false).ok());
  EXPECT_EQ(Weights(model), (std::vector<float>{0, 0, 0}));
  const BufferedPush a = DensePush(1, {4, 0, 8});
  const BufferedPush b = DensePush(3, {0, 4, 0});
  ASSERT_TRUE(model.ApplyPushes({&a, &b}, UpdateStep::Whole(0.5, 1)).ok());
  // mean = (1*a + 3*b) / 4 = {1, 3, 2}; w -= 0.5 * mean.
  EXPECT_EQ(Weights(model), (std::vector<float>{-0.5f, -1.5f, -1.0f}));
}

TEST(ShardModelTest, OnePushOverTheWholeRangeIsItsOwnMean) {
  ShardModel model;
  ASSERT_TRUE(model.Build(SgdJob(), OneTensorLayout(2), 0, false, false).ok());
  const BufferedPush a = DensePush(7, {2, -2});
  ASSERT_TRUE(model.ApplyPushes({&a}, UpdateStep::Whole(0.25, 1)).ok());
  EXPECT_EQ(Weights(model), (std::vector<float>{-0.5f, 0.5f}));
  EXPECT_TRUE(model.ApplyPushes({}, UpdateStep::Whole(0.25, 2)).ok());
  EXPECT_EQ(Weights(model), (std::vector<float>{-0.5f, 0.5f}));
}

TEST(ShardModelTest, ARestoringSurvivorKeepsItsArrays) {
  ShardModel model;
  const KeyLayout layout = OneTensorLayout(2);
  ASSERT_TRUE(model.Build(SgdJob(), layout, 0, false, false).ok());
  const DenseStore* before = &model.dense();
  const BufferedPush a = DensePush(1, {2, 2});
  ASSERT_TRUE(model.ApplyPushes({&a}, UpdateStep::Whole(1, 1)).ok());
  // A rollback restores every value into the same arrays.
  ASSERT_TRUE(model.Build(SgdJob(), layout, 0, false, true).ok());
  EXPECT_EQ(&model.dense(), before);
  // A fresh start (no round) builds new, initialized arrays.
  ASSERT_TRUE(model.Build(SgdJob(), layout, 0, false, false).ok());
  EXPECT_EQ(Weights(model), (std::vector<float>{0, 0}));
}

TEST(ShardModelTest, AnUnknownOptimizerIsRefused) {
  ShardModel model;
  JobConfig job = SgdJob();
  job.optimizer = "lion";
  EXPECT_FALSE(model.Build(job, OneTensorLayout(2), 0, false, false).ok());
}

}  // namespace
}  // namespace lockstep
