#include "server/model/sparse_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace lockstep {
namespace {

std::unique_ptr<Optimizer> MakeOptimizer(const std::string& name) {
  return std::move(Optimizer::Create({.name = name})).value();
}

class SparseTableTest : public ::testing::Test {
 protected:
  static std::vector<float> ReadAll(const SparseTable& table,
                                    const std::vector<uint64_t>& ids) {
    std::vector<float> out(ids.size() * table.dim(), -1.0f);
    table.Read(ids, out.data());
    return out;
  }
};

TEST_F(SparseTableTest, MissingIdsReadAsZerosWithoutCreatingRows) {
  SparseTable table(2, 0);
  EXPECT_EQ(ReadAll(table, {3, 9}), std::vector<float>(4, 0.0f));
  EXPECT_EQ(table.rows(), 0u);
}

TEST_F(SparseTableTest, ApplyCreatesZeroRowsAndUpdatesOnlyGivenIds) {
  SparseTable table(2, 0);
  std::unique_ptr<Optimizer> sgd = MakeOptimizer("sgd");
  const std::vector<uint64_t> ids = {5, 9};
  const std::vector<float> grads = {1.0f, 2.0f, -3.0f, 4.0f};
  table.ApplyGradient(ids, grads.data(), *sgd, 0.5, 1);
  EXPECT_EQ(table.rows(), 2u);
  EXPECT_EQ(ReadAll(table, {5, 7, 9}),
            (std::vector<float>{-0.5f, -1.0f, 0.0f, 0.0f, 1.5f, -2.0f}));

  const std::vector<uint64_t> only9 = {9};
  table.ApplyGradient(only9, grads.data(), *sgd, 0.5, 2);
  EXPECT_EQ(table.rows(), 2u);
  EXPECT_EQ(ReadAll(table, {5, 9}),
            (std::vector<float>{-0.5f, -1.0f, 1.0f, -3.0f}));
}

TEST_F(SparseTableTest, LazyUpdateLeavesStateOfUntouchedRows) {
  SparseTable table(1, 2);
  std::unique_ptr<Optimizer> adam = MakeOptimizer("adam");
  const std::vector<uint64_t> both = {1, 2};
  const std::vector<uint64_t> only2 = {2};
  const std::vector<float> grads = {0.5f, -1.0f};
  table.ApplyGradient(both, grads.data(), *adam, 0.1, 1);
  const float m1 = table.state(0)[0];
  const float v1 = table.state(1)[0];
  table.ApplyGradient(only2, grads.data(), *adam, 0.1, 2);

  // Row 1 saw one update, row 2 two (with gradient -1 then 0.5).
  float w[] = {0.0f, 0.0f};
  float m[] = {0.0f, 0.0f};
  float v[] = {0.0f, 0.0f};
  float* slots0[] = {&m[0], &v[0]};
  float* slots1[] = {&m[1], &v[1]};
  adam->Apply(&w[0], &grads[0], slots0, 1, 0.1, 1);
  adam->Apply(&w[1], &grads[1], slots1, 1, 0.1, 1);
  adam->Apply(&w[1], &grads[0], slots1, 1, 0.1, 2);
  EXPECT_EQ(ReadAll(table, {1, 2}), (std::vector<float>{w[0], w[1]}));
  EXPECT_EQ(table.state(0)[0], m1);
  EXPECT_EQ(table.state(1)[0], v1);
  EXPECT_EQ(table.state(0)[1], m[1]);
  EXPECT_EQ(table.state(1)[1], v[1]);
  EXPECT_EQ(table.ids()[0], 1u);
}

TEST_F(SparseTableTest, ScatteredRowsAcrossManyChunksGetTheirOwnGradient) {
  // Rows created evens first then odds, so ids map to interleaved rows, and
  // more ids than one gather chunk holds.
  constexpr uint64_t kIds = 9000;
  SparseTable table(1, 1);
  std::unique_ptr<Optimizer> momentum = MakeOptimizer("momentum");
  std::vector<uint64_t> evens, odds, all;
  for (uint64_t id = 0; id < kIds; ++id) {
    (id % 2 == 0 ? evens : odds).push_back(id);
    all.push_back(id);
  }
  const std::vector<float> ones(kIds, 1.0f);
  table.ApplyGradient(evens, ones.data(), *momentum, 1.0, 1);
  table.ApplyGradient(odds, ones.data(), *momentum, 1.0, 1);
  std::vector<float> grads(kIds);
  for (uint64_t id = 0; id < kIds; ++id) grads[id] = static_cast<float>(id);
  table.ApplyGradient(all, grads.data(), *momentum, 1.0, 2);

  // v = 0.9 * 1 + id; w = -1 - v.
  const std::vector<float> weights = ReadAll(table, all);
  for (uint64_t id = 0; id < kIds; ++id) {
    ASSERT_FLOAT_EQ(weights[id], -1.0f - (0.9f + static_cast<float>(id)))
        << "id " << id;
  }
}

class SparseAccumulatorTest : public ::testing::Test {
 protected:
  static void Finish(const SparseAccumulator& acc, std::vector<uint64_t>* ids,
                     std::vector<float>* grads) {
    ids->assign(1, 999);
    grads->assign(1, -1.0f);
    acc.Finish(ids, grads);
  }
};

TEST_F(SparseAccumulatorTest, WeightsByBatchAndCountsAbsentIdsAsZero) {
  SparseAccumulator acc;
  // Worker A, batch 1: ids 1 and 3. Worker B, batch 3: ids 2 and 3. dim 2.
  ASSERT_TRUE(acc.Add(std::vector<uint64_t>{1, 3},
                      std::vector<float>{4.0f, 8.0f, 4.0f, -4.0f}, 2, 1)
                  .ok());
  ASSERT_TRUE(acc.Add(std::vector<uint64_t>{2, 3},
                      std::vector<float>{8.0f, 4.0f, 0.0f, 12.0f}, 2, 3)
                  .ok());
  EXPECT_EQ(acc.count(), 2u);
  EXPECT_EQ(acc.total_batch(), 4u);
  std::vector<uint64_t> ids;
  std::vector<float> grads;
  Finish(acc, &ids, &grads);
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3}));
  // id 1: 1/4 * A; id 2: 3/4 * B; id 3: 1/4 * A + 3/4 * B.
  EXPECT_EQ(grads, (std::vector<float>{1.0f, 2.0f, 6.0f, 3.0f, 1.0f, 8.0f}));
}

TEST_F(SparseAccumulatorTest, EmptyPushStillCountsItsBatch) {
  SparseAccumulator acc;
  ASSERT_TRUE(
      acc.Add(std::vector<uint64_t>{7}, std::vector<float>{4.0f}, 1, 1).ok());
  ASSERT_TRUE(acc.Add({}, {}, 1, 3).ok());
  std::vector<uint64_t> ids;
  std::vector<float> grads;
  Finish(acc, &ids, &grads);
  EXPECT_EQ(ids, (std::vector<uint64_t>{7}));
  EXPECT_EQ(grads, (std::vector<float>{1.0f}));
}

TEST_F(SparseAccumulatorTest, RejectsUnsortedDuplicateOrMisSizedPushes) {
  SparseAccumulator acc;
  const std::vector<float> two = {1.0f, 2.0f};
  EXPECT_EQ(acc.Add(std::vector<uint64_t>{5, 2}, two, 1, 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(acc.Add(std::vector<uint64_t>{5, 5}, two, 1, 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(acc.Add(std::vector<uint64_t>{5}, two, 1, 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(acc.Add(std::vector<uint64_t>{5}, two, 0, 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(acc.Add(std::vector<uint64_t>{5}, two, 2, 0).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(acc.count(), 0u);
  ASSERT_TRUE(acc.Add(std::vector<uint64_t>{5}, two, 2, 1).ok());
  EXPECT_EQ(acc.Add(std::vector<uint64_t>{1, 2}, two, 1, 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(acc.count(), 1u);
  EXPECT_EQ(acc.total_batch(), 1u);
}

TEST_F(SparseAccumulatorTest, ResetForgetsPushesAndRowWidth) {
  SparseAccumulator acc;
  ASSERT_TRUE(
      acc.Add(std::vector<uint64_t>{5}, std::vector<float>{1.0f, 2.0f}, 2, 1)
          .ok());
  acc.Reset();
  EXPECT_EQ(acc.count(), 0u);
  EXPECT_EQ(acc.dim(), 0u);
  std::vector<uint64_t> ids;
  std::vector<float> grads;
  Finish(acc, &ids, &grads);
  EXPECT_TRUE(ids.empty());
  EXPECT_TRUE(grads.empty());
  ASSERT_TRUE(
      acc.Add(std::vector<uint64_t>{6}, std::vector<float>{3.0f}, 1, 2).ok());
  Finish(acc, &ids, &grads);
  EXPECT_EQ(ids, (std::vector<uint64_t>{6}));
  EXPECT_EQ(grads, (std::vector<float>{3.0f}));
}

}  // namespace
}  // namespace lockstep
