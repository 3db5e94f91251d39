#include "server/model/dense_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "common/layout.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSeed = 42;

class DenseStoreTest : public ::testing::Test {
 protected:
  // Keys [0, 10) scale 0.5, [10, 16) scale 2, [16, 20) scale 0.
  static std::vector<TensorInfo> Tensors() {
    return {{.name = "a",
             .shape = {2, 5},
             .offset = 0,
             .size = 10,
             .init_scale = 0.5f},
            {.name = "b",
             .shape = {6},
             .offset = 10,
             .size = 6,
             .init_scale = 2.0f},
            {.name = "c",
             .shape = {4},
             .offset = 16,
             .size = 4,
             .init_scale = 0.0f}};
  }

  static std::unique_ptr<DenseStore> Make(KeySpan range, int state_slots) {
    StatusOr<std::unique_ptr<DenseStore>> store =
        DenseStore::Create(range, Tensors(), kSeed, state_slots);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(store).value();
  }

  static std::unique_ptr<Optimizer> Adam() {
    return std::move(Optimizer::Create({.name = "adam"})).value();
  }
};

TEST_F(DenseStoreTest, InitialisesEachKeyWithItsTensorsScaleAcrossBoundaries) {
  // [7, 18) starts inside "a" and ends inside "c".
  std::unique_ptr<DenseStore> store = Make({7, 18}, 2);
  ASSERT_EQ(store->weights().size(), 11u);
  for (uint64_t key = 7; key < 18; ++key) {
    const float scale = key < 10 ? 0.5f : (key < 16 ? 2.0f : 0.0f);
    EXPECT_EQ(store->weights()[key - 7], InitialValue(kSeed, key, scale))
        << "key " << key;
  }
  EXPECT_EQ(store->weights()[16 - 7], 0.0f);
  EXPECT_NE(store->weights()[12 - 7], 0.0f);
  ASSERT_EQ(store->state().size(), 22u);
  for (float x : store->state()) EXPECT_EQ(x, 0.0f);
}

// A store a restore will overwrite skips the initial values; a large one
// (prefaulted arrays) is zeroed the same way as a small one.
TEST_F(DenseStoreTest, WithoutInitialValuesEveryArrayStartsAtZero) {
  auto small = DenseStore::Create({0, 20}, Tensors(), kSeed, 2, false);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  for (float x : (*small)->weights()) EXPECT_EQ(x, 0.0f);
  const uint64_t keys = 3u << 20;  // 12 MiB of weights, 24 MiB of state
  const std::vector<TensorInfo> big = {{.name = "w",
                                        .shape = {keys},
                                        .offset = 0,
                                        .size = keys,
                                        .init_scale = 1.0f}};
  auto large = DenseStore::Create({0, keys}, big, kSeed, 2, false);
  ASSERT_TRUE(large.ok()) << large.status().ToString();
  ASSERT_EQ((*large)->weights().size(), keys);
  ASSERT_EQ((*large)->state().size(), 2 * keys);
  for (float x : (*large)->weights()) ASSERT_EQ(x, 0.0f);
  for (float x : (*large)->state()) ASSERT_EQ(x, 0.0f);
  (*large)->mutable_weights()[keys - 1] = 3.0f;  // every page is writable
  auto initialised = DenseStore::Create({0, keys}, big, kSeed, 2);
  ASSERT_TRUE(initialised.ok());
  EXPECT_EQ((*initialised)->weights()[keys - 1],
            InitialValue(kSeed, keys - 1, 1.0f));
}

TEST_F(DenseStoreTest, AdjacentShardsTogetherMatchOneStoreOverTheUnion) {
  std::unique_ptr<DenseStore> whole = Make({0, 20}, 0);
  std::unique_ptr<DenseStore> left = Make({0, 13}, 0);
  std::unique_ptr<DenseStore> right = Make({13, 20}, 0);
  for (uint64_t key = 0; key < 20; ++key) {
    const float piece =
        key < 13 ? left->weights()[key] : right->weights()[key - 13];
    EXPECT_EQ(piece, whole->weights()[key]) << "key " << key;
  }
}

TEST_F(DenseStoreTest, CreateRejectsBadRangeTensorsOrSlots) {
  EXPECT_EQ(DenseStore::Create({15, 21}, Tensors(), kSeed, 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(DenseStore::Create({5, 4}, Tensors(), kSeed, 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(DenseStore::Create({0, 4}, Tensors(), kSeed, kMaxOptimizerSlots + 1)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  std::vector<TensorInfo> gap = Tensors();
  gap[1].offset = 11;
  EXPECT_EQ(DenseStore::Create({0, 4}, gap, kSeed, 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(DenseStore::Create({20, 20}, Tensors(), kSeed, 0).ok());
}

TEST_F(DenseStoreTest, ReadCopiesTheRequestedKeys) {
  std::unique_ptr<DenseStore> store = Make({7, 18}, 0);
  std::vector<float> out(3);
  ASSERT_TRUE(store->Read({9, 12}, out.data()).ok());
  for (uint64_t key = 9; key < 12; ++key) {
    EXPECT_EQ(out[key - 9], store->weights()[key - 7]);
  }
}

TEST_F(DenseStoreTest, ReadOutsideRangeIsInvalidArgumentNamingTheRange) {
  std::unique_ptr<DenseStore> store = Make({7, 18}, 0);
  std::vector<float> out(20);
  Status status = store->Read({5, 9}, out.data());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("[5, 9)"));
  EXPECT_THAT(status.message(), HasSubstr("[7, 18)"));
  EXPECT_EQ(store->Read({17, 19}, out.data()).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(DenseStoreTest, LentWeightsAreReclaimedOnceBeforeTheyChange) {
  std::unique_ptr<DenseStore> store = Make({0, 16}, 0);
  const std::unique_ptr<Optimizer> sgd =
      std::move(Optimizer::Create({.name = "sgd"})).value();
  const std::vector<float> before(store->weights().begin(),
                                  store->weights().end());
  int reclaims = 0;
  auto view = store->Lend({2, 6}, [&] {
    ++reclaims;
    // Still the weights that were lent: the update has not begun.
    EXPECT_EQ(store->weights()[3], before[3]);
  });
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->data(), store->weights().data() + 2);
  EXPECT_EQ(view->size(), 4u);
  EXPECT_EQ(reclaims, 0);
  const std::vector<float> grad(16, 1.0f);
  ASSERT_TRUE(store->ApplyGradient({0, 16}, grad.data(), *sgd, 0.5, 1).ok());
  EXPECT_EQ(reclaims, 1);
  EXPECT_NE(store->weights()[3], before[3]);
  ASSERT_TRUE(store->ApplyGradient({0, 16}, grad.data(), *sgd, 0.5, 2).ok());
  EXPECT_EQ(reclaims, 1) << "nothing was lent since";

  // A restore, a direct write and the store's end reclaim too; a bad range
  // lends nothing.
  ASSERT_TRUE(store->Lend({0, 1}, [&] { ++reclaims; }).ok());
  ASSERT_TRUE(store->LoadOverlap({0, 16}, grad, {}).ok());
  EXPECT_EQ(reclaims, 2);
  ASSERT_TRUE(store->Lend({0, 1}, [&] { ++reclaims; }).ok());
  store->mutable_weights()[0] = 1.0f;
  EXPECT_EQ(reclaims, 3);
  EXPECT_FALSE(store->Lend({10, 17}, [&] { ++reclaims; }).ok());
  store->EndLoans();
  EXPECT_EQ(reclaims, 3);
  ASSERT_TRUE(store->Lend({0, 1}, [&] { ++reclaims; }).ok());
  store.reset();
  EXPECT_EQ(reclaims, 4);
}

TEST_F(DenseStoreTest, ApplyGradientTouchesOnlyTheSubRangeAndItsState) {
  std::unique_ptr<DenseStore> store = Make({7, 18}, 2);
  std::unique_ptr<Optimizer> adam = Adam();
  const std::vector<float> before(store->weights().begin(),
                                  store->weights().end());
  const std::vector<float> grad = {1.0f, -2.0f, 0.5f};
  ASSERT_TRUE(store->ApplyGradient({10, 13}, grad.data(), *adam, 0.1, 1).ok());

  // Expected: the same update on standalone copies of keys [10, 13).
  std::vector<float> w(before.begin() + 3, before.begin() + 6);
  std::vector<float> m(3, 0.0f), v(3, 0.0f);
  float* slots[] = {m.data(), v.data()};
  adam->Apply(w.data(), grad.data(), slots, 3, 0.1, 1);

  const size_t n = 11;
  for (uint64_t key = 7; key < 18; ++key) {
    const size_t i = key - 7;
    const bool inside = key >= 10 && key < 13;
    SCOPED_TRACE(key);
    EXPECT_EQ(store->weights()[i], inside ? w[i - 3] : before[i]);
    EXPECT_EQ(store->state()[i], inside ? m[i - 3] : 0.0f);
    EXPECT_EQ(store->state()[n + i], inside ? v[i - 3] : 0.0f);
  }
  EXPECT_NE(store->state()[n + 3], 0.0f);
}

TEST_F(DenseStoreTest, ApplyGradientRejectsOutOfRangeKeysAndSlotMismatch) {
  std::unique_ptr<DenseStore> store = Make({7, 18}, 1);
  std::unique_ptr<Optimizer> momentum =
      std::move(Optimizer::Create({.name = "momentum"})).value();
  const std::vector<float> grad(12, 1.0f);
  const std::vector<float> before(store->weights().begin(),
                                  store->weights().end());
  EXPECT_EQ(store->ApplyGradient({6, 9}, grad.data(), *momentum, 0.1, 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->ApplyGradient({7, 9}, grad.data(), *Adam(), 0.1, 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      std::vector<float>(store->weights().begin(), store->weights().end()),
      before);
}

TEST_F(DenseStoreTest, StepIsSetByTheServerNotByApplyGradient) {
  std::unique_ptr<DenseStore> store = Make({0, 4}, 2);
  EXPECT_EQ(store->step(), 0);
  const std::vector<float> grad(4, 1.0f);
  ASSERT_TRUE(store->ApplyGradient({0, 4}, grad.data(), *Adam(), 0.1, 1).ok());
  EXPECT_EQ(store->step(), 0);
  store->set_step(5);
  EXPECT_EQ(store->step(), 5);
}

}  // namespace
}  // namespace lockstep
