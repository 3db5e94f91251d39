#include "server/shard/eval_images.h"

#include <gtest/gtest.h>

#include <vector>

namespace lockstep {
namespace {

std::unique_ptr<DenseStore> Store(float value) {
  const std::vector<TensorInfo> tensors = {{"w", {8}, 0, 8, 0.0f}};
  auto store = DenseStore::Create({2, 6}, tensors, 1, 0);
  EXPECT_TRUE(store.ok());
  for (float& w : (*store)->mutable_weights()) w = value;
  return std::move(store).value();
}

TEST(EvalImagesTest, AnImageKeepsTheStateOfItsPointWhateverComesAfter) {
  EvalImages images;
  auto dense = Store(1.0f);
  images.Capture(10, *dense, nullptr);
  for (float& w : dense->mutable_weights()) w = 2.0f;  // training goes on
  const EvalImages::Image* image = images.Find(10);
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->point, 10);
  EXPECT_EQ(image->dense, std::vector<float>(4, 1.0f));
}

TEST(EvalImagesTest, FindsTheOldestPointAtOrAfterAndReleasesUpToARead) {
  EvalImages images;
  auto dense = Store(1.0f);
  images.Capture(10, *dense, nullptr);
  images.Capture(20, *dense, nullptr);
  EXPECT_EQ(images.Find(5)->point, 10);
  EXPECT_EQ(images.Find(11)->point, 20);
  EXPECT_EQ(images.Find(21), nullptr);
  images.Release(10);
  EXPECT_EQ(images.size(), 1u);
  EXPECT_EQ(images.Find(10)->point, 20);
}

TEST(EvalImagesTest, KeepsAtMostItsCapacityDroppingTheOldest) {
  EvalImages images;
  auto dense = Store(1.0f);
  for (int64_t p = 10; p <= 50; p += 10) images.Capture(p, *dense, nullptr);
  EXPECT_EQ(images.size(), EvalImages::kCapacity);
  EXPECT_EQ(images.Find(0)->point,
            50 - 10 * static_cast<int64_t>(EvalImages::kCapacity - 1));
}

TEST(EvalImagesTest, SparseRowsAreReadByIdFromTheImage) {
  auto opt = Optimizer::Create({.name = "sgd"}).value();
  SparseTable table(2, 0);
  const std::vector<uint64_t> ids = {9, 4};  // rows created in this order
  const std::vector<float> grads = {-1, -2, -3, -4};
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::vector<uint64_t> one = {ids[i]};
    table.ApplyGradient(one, grads.data() + 2 * i, *opt,
                        UpdateStep::Whole(1.0, 1));
  }
  EvalImages images;
  auto dense = Store(0.0f);
  images.Capture(5, *dense, &table);
  const std::vector<uint64_t> more = {4, 7};
  const std::vector<float> bump = {10, 10, 10, 10};
  table.ApplyGradient(more, bump.data(), *opt, UpdateStep::Whole(1.0, 2));
  std::vector<float> out(6);
  const std::vector<uint64_t> want = {4, 7, 9};
  images.Find(5)->ReadSparse(want, out.data());
  EXPECT_EQ(out, (std::vector<float>{3, 4, 0, 0, 1, 2}));
}

}  // namespace
}  // namespace lockstep
