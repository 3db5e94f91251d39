// The stores under a live snapshot capture: an update after the freeze
// copies the chunks it touches first, so the image is the state at the
// freeze while the update's result is the same as without a capture; and
// restore loads what a round holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "optimizers/optimizer.h"
#include "server/model/dense_store.h"
#include "server/model/sparse_table.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

std::vector<TensorInfo> OneTensor(uint64_t size) {
  return {{.name = "w",
           .shape = {size},
           .offset = 0,
           .size = size,
           .init_scale = 1.0f}};
}

std::unique_ptr<Optimizer> Adam() {
  OptimizerConfig config;
  config.name = "adam";
  return std::move(Optimizer::Create(config)).value();
}

template <typename T>
std::vector<std::byte> BytesOf(std::span<const T> values) {
  const auto bytes = std::as_bytes(values);
  return {bytes.begin(), bytes.end()};
}

std::vector<std::byte> Image(const SnapshotCapture& capture, size_t array) {
  const auto image = capture.image(array);
  return {image.begin(), image.end()};
}

TEST(DenseStoreCaptureTest, UpdatesAfterTheFreezeLeaveTheImageAsItWas) {
  constexpr uint64_t kKeys = 10000;
  auto opt = Adam();
  auto watched = DenseStore::Create({0, kKeys}, OneTensor(kKeys), 3, 2);
  auto plain = DenseStore::Create({0, kKeys}, OneTensor(kKeys), 3, 2);
  ASSERT_TRUE(watched.ok() && plain.ok());
  std::vector<float> grad(kKeys);
  for (uint64_t k = 0; k < kKeys; ++k) grad[k] = 0.001f * (k % 97) - 0.04f;
  for (DenseStore* s : {watched->get(), plain->get()}) {
    ASSERT_TRUE(s->ApplyGradient({0, kKeys}, grad.data(), *opt, 0.01, 1).ok());
  }
  const std::vector<std::byte> weights = BytesOf((*watched)->weights());
  const std::vector<std::byte> state = BytesOf(
      std::span<const float>((*watched)->state()).subspan(kKeys, kKeys));

  // Chunks of 1000 bytes (250 floats, not a divisor of the range): the
  // background copy has not started, so the updates copy what they touch.
  SnapshotCapture capture((*watched)->SnapshotArrays(), 1000);
  ASSERT_EQ(capture.arrays(), 3u);
  EXPECT_EQ(capture.name(0), "dense_weights");
  EXPECT_EQ(capture.name(2), "dense_state_1");
  (*watched)->WatchCapture(&capture, 0);
  for (DenseStore* s : {watched->get(), plain->get()}) {
    ASSERT_TRUE(
        s->ApplyGradient({1234, 5678}, grad.data(), *opt, 0.01, 2).ok());
    ASSERT_TRUE(s->ApplyGradient({0, kKeys}, grad.data(), *opt, 0.01, 3).ok());
  }
  EXPECT_GT(capture.chunks_copied_by_mutator(), 0u);
  capture.Run();
  ASSERT_TRUE(capture.Done());
  (*watched)->WatchCapture(nullptr, 0);
  EXPECT_EQ(Image(capture, 0), weights);
  EXPECT_EQ(Image(capture, 2), state);
  EXPECT_EQ(BytesOf((*watched)->weights()), BytesOf((*plain)->weights()));
  EXPECT_EQ(BytesOf(std::span<const float>((*watched)->state())),
            BytesOf(std::span<const float>((*plain)->state())));
}

TEST(DenseStoreCaptureTest, BackgroundCopyRacingUpdatesStillFreezes) {
  constexpr uint64_t kKeys = 1 << 18;
  auto opt = Adam();
  auto store = DenseStore::Create({0, kKeys}, OneTensor(kKeys), 5, 2);
  ASSERT_TRUE(store.ok());
  const std::vector<std::byte> weights = BytesOf((*store)->weights());
  std::vector<float> grad(kKeys, 0.5f);
  SnapshotCapture capture((*store)->SnapshotArrays(), 4096);
  (*store)->WatchCapture(&capture, 0);
  std::thread background([&] { capture.Run(); });
  for (int step = 1; step <= 3; ++step) {
    ASSERT_TRUE(
        (*store)->ApplyGradient({0, kKeys}, grad.data(), *opt, 0.1, step).ok());
  }
  background.join();
  ASSERT_TRUE(capture.Done());
  EXPECT_EQ(Image(capture, 0), weights);
  EXPECT_NE(BytesOf((*store)->weights()), weights);
}

TEST(DenseStoreCaptureTest, LoadOverlapTakesOnlyItsOwnKeys) {
  auto store = DenseStore::Create({10, 20}, OneTensor(30), 1, 1);
  ASSERT_TRUE(store.ok());
  std::vector<float> weights(15), slot(15);
  for (int i = 0; i < 15; ++i) {
    weights[i] = static_cast<float>(5 + i);  // key 5 + i
    slot[i] = -static_cast<float>(5 + i);
  }
  ASSERT_TRUE((*store)->LoadOverlap({5, 20}, weights, {slot}).ok());
  for (uint64_t k = 10; k < 20; ++k) {
    EXPECT_EQ((*store)->weights()[k - 10], static_cast<float>(k));
    EXPECT_EQ((*store)->state()[k - 10], -static_cast<float>(k));
  }
  EXPECT_THAT((*store)->LoadOverlap({5, 20}, weights, {}).message(),
              HasSubstr("round has 0 optimizer state slots"));
  EXPECT_THAT((*store)->LoadOverlap({5, 21}, weights, {slot}).message(),
              HasSubstr("do not hold 16 floats"));
}

TEST(DenseStoreCaptureTest, LoadArrayOverlapTakesUnalignedBytes) {
  auto store = DenseStore::Create({10, 14}, OneTensor(20), 1, 1, false);
  ASSERT_TRUE(store.ok());
  // Keys 8..16 as floats 8..15, one byte into a buffer: not float-aligned.
  std::vector<std::byte> buffer(1 + 8 * sizeof(float));
  for (int k = 0; k < 8; ++k) {
    const float v = static_cast<float>(8 + k);
    std::memcpy(buffer.data() + 1 + k * sizeof(float), &v, sizeof v);
  }
  const auto bytes = std::span<const std::byte>(buffer).subspan(1);
  ASSERT_TRUE((*store)->LoadArrayOverlap({8, 16}, 1, bytes).ok());
  EXPECT_EQ(
      std::vector<float>((*store)->state().begin(), (*store)->state().end()),
      (std::vector<float>{10, 11, 12, 13}));
  EXPECT_FALSE((*store)->LoadArrayOverlap({8, 16}, 2, bytes).ok());
  EXPECT_FALSE((*store)->LoadArrayOverlap({8, 15}, 0, bytes).ok());
}

TEST(SparseTableCaptureTest, GrowthAfterTheFreezeLeavesTheImageAsItWas) {
  auto opt = Adam();
  SparseTable table(4, 2);
  std::vector<uint64_t> ids = {3, 8, 100};
  std::vector<float> grads(ids.size() * 4, 0.25f);
  table.ApplyGradient(ids, grads.data(), *opt, 0.1, 1);
  const auto old_ids = BytesOf(table.ids());
  const auto old_weights = BytesOf(table.weights());
  const auto old_m = BytesOf(table.state(0));

  SnapshotCapture capture(table.SnapshotArrays(), 8);
  ASSERT_EQ(capture.arrays(), 4u);
  EXPECT_EQ(capture.name(0), "sparse_ids");
  table.WatchCapture(&capture, 0);
  // New rows (the vectors grow and may move) and updated old ones.
  std::vector<uint64_t> more;
  for (uint64_t id = 0; id < 1000; id += 7) more.push_back(id);
  more.push_back(3);
  more.push_back(100);
  std::sort(more.begin(), more.end());
  std::vector<float> more_grads(more.size() * 4, -0.5f);
  table.ApplyGradient(more, more_grads.data(), *opt, 0.1, 2);
  capture.Run();
  ASSERT_TRUE(capture.Done());
  table.WatchCapture(nullptr, 0);
  EXPECT_EQ(Image(capture, 0), old_ids);
  EXPECT_EQ(Image(capture, 1), old_weights);
  EXPECT_EQ(Image(capture, 2), old_m);
  EXPECT_EQ(table.rows(), 3u + more.size() - 2);
}

TEST(SparseTableCaptureTest, LoadRowRefusesADuplicateId) {
  SparseTable table(2, 1);
  const float w[2] = {1, 2}, m[2] = {3, 4};
  const float* slots[1] = {m};
  ASSERT_TRUE(table.LoadRow(9, w, slots).ok());
  EXPECT_EQ(table.rows(), 1u);
  EXPECT_EQ(table.weights()[1], 2.0f);
  EXPECT_EQ(table.state(0)[0], 3.0f);
  EXPECT_THAT(table.LoadRow(9, w, slots).message(), HasSubstr("twice"));
}

}  // namespace
}  // namespace lockstep
