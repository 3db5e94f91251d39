// RestoreShard's record of which pushes the restored state contains (the
// per-shard cut of an apply-on-arrival round), which a server uses to skip
// a resumed worker's pushes it already holds: with the round's own layout
// it is the shard's own source's cut; re-sharded, only what every source
// the state came from holds.
#include "server/snapshot/shard_restore.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <span>
#include <vector>

#include "server/model/dense_store.h"
#include "server/model/snapshot_capture.h"
#include "server/snapshot/shard_round.h"
#include "server/store/memory_store.h"

namespace lockstep {
namespace {

constexpr uint64_t kKeys = 40;

KeyLayout Layout(uint32_t shards) {
  auto layout = KeyLayout::Build({{.name = "w", .shape = {kKeys}}}, shards, 0);
  EXPECT_TRUE(layout.ok());
  return *layout;
}

// Round 1 of a 2-shard job, shard k holding `cuts[k]` at `times[k]`
// clocks of progress.
std::vector<std::unique_ptr<MemoryStore>> TwoShardRound(
    const std::vector<std::map<uint32_t, int64_t>>& cuts,
    const std::vector<double>& times = {10, 10}) {
  const KeyLayout layout = Layout(2);
  std::vector<std::unique_ptr<MemoryStore>> stores;
  for (uint32_t k = 0; k < 2; ++k) {
    auto dense =
        DenseStore::Create(layout.shards()[k].dense, layout.tensors(), 1, 0);
    EXPECT_TRUE(dense.ok());
    SnapshotCapture capture((*dense)->SnapshotArrays(), 64);
    capture.Run();
    ShardRoundMeta meta;
    meta.round = 1;
    meta.clock = 9;
    meta.shard = k;
    meta.layout = layout;
    meta.optimizer = "sgd";
    meta.state_slots = 0;
    meta.contained = cuts[k];
    meta.time = times[k];
    meta.step = static_cast<int64_t>(times[k] * 4);
    meta.norm_scale = 1.5 + k;  // each shard's own keys' scale
    stores.push_back(std::make_unique<MemoryStore>());
    EXPECT_TRUE(WriteShardRound(*stores.back(), meta, capture).ok());
  }
  return stores;
}

RestoredShard Restored(const std::vector<std::unique_ptr<MemoryStore>>& stores,
                       uint32_t shards, uint32_t shard) {
  const KeyLayout layout = Layout(shards);
  std::vector<const SnapshotStore*> sources;
  for (const auto& s : stores) sources.push_back(s.get());
  auto dense = DenseStore::Create(layout.shards()[shard].dense,
                                  layout.tensors(), 1, 0, false);
  EXPECT_TRUE(dense.ok());
  auto restored =
      RestoreShard(sources, 1, layout, shard, "sgd", dense->get(), nullptr);
  EXPECT_TRUE(restored.ok()) << restored.status().ToString();
  return restored.ok() ? *restored : RestoredShard{};
}

std::map<uint32_t, int64_t> CutRestored(
    const std::vector<std::unique_ptr<MemoryStore>>& stores, uint32_t shards,
    uint32_t shard) {
  return Restored(stores, shards, shard).contained;
}

TEST(ShardRestoreCutTest, WithTheRoundsLayoutEachShardGetsItsOwnCut) {
  // Shard 0 froze after worker 0's clock 5 arrived, shard 1 before it;
  // worker 2's first push reached only shard 0.
  const auto stores =
      TwoShardRound({{{0, 5}, {1, 7}, {2, 0}}, {{0, 4}, {1, 7}}});
  EXPECT_EQ(CutRestored(stores, 2, 0),
            (std::map<uint32_t, int64_t>{{0, 5}, {1, 7}, {2, 0}}));
  EXPECT_EQ(CutRestored(stores, 2, 1),
            (std::map<uint32_t, int64_t>{{0, 4}, {1, 7}}));
}

TEST(ShardRestoreCutTest, ReShardedOnlyWhatEverySourceHoldsCounts) {
  const auto stores =
      TwoShardRound({{{0, 5}, {1, 7}, {2, 0}}, {{0, 4}, {1, 7}}});
  // Of 3 shards, shard 1 takes keys from both old shards.
  EXPECT_EQ(CutRestored(stores, 3, 1),
            (std::map<uint32_t, int64_t>{{0, 4}, {1, 7}}));
  // Shard 0 takes keys from old shard 0 only.
  EXPECT_EQ(CutRestored(stores, 3, 0),
            (std::map<uint32_t, int64_t>{{0, 5}, {1, 7}, {2, 0}}));
}

// Under apply-on-arrival each shard froze at its own progress (a logical
// clock's open shares in its C and P): it must continue from its own, or
// it would close clocks at other pushes than the other shards.
TEST(ShardRestoreProgressTest, WithTheRoundsLayoutEachShardGetsItsOwnTime) {
  const auto stores = TwoShardRound({{}, {}}, {9.75, 10.0});
  EXPECT_DOUBLE_EQ(Restored(stores, 2, 0).time, 9.75);
  EXPECT_EQ(Restored(stores, 2, 0).step, 39);
  EXPECT_DOUBLE_EQ(Restored(stores, 2, 1).time, 10.0);
  // Re-sharded there is no own source: the furthest one.
  EXPECT_DOUBLE_EQ(Restored(stores, 3, 1).time, 10.0);
}

// A shard's push-norm outlier scale is the norm over its own keys: it
// comes back with the round's own layout only.
TEST(ShardRestoreProgressTest, TheOutlierScaleIsTheOwnShardsOnly) {
  const auto stores = TwoShardRound({{}, {}});
  EXPECT_DOUBLE_EQ(Restored(stores, 2, 0).norm_scale, 1.5);
  EXPECT_DOUBLE_EQ(Restored(stores, 2, 1).norm_scale, 2.5);
  EXPECT_DOUBLE_EQ(Restored(stores, 3, 1).norm_scale, 0);
}

// A momentum round taken under BSP (1 slot) restored into an
// apply-on-arrival store (3: velocity, C, P) that was kept from before a
// rollback: C and P must start at 0 (a clock boundary), not keep the
// store's old values.
TEST(ShardRestoreProgressTest, SlotsTheRoundLacksStartAtZero) {
  const KeyLayout layout = Layout(1);
  auto saved = DenseStore::Create(layout.shards()[0].dense, layout.tensors(), 1,
                                  /*state_slots=*/1);
  ASSERT_TRUE(saved.ok());
  for (float& v : (*saved)->state()) v = 0.5f;
  SnapshotCapture capture((*saved)->SnapshotArrays(), 64);
  capture.Run();
  ShardRoundMeta meta;
  meta.round = 1;
  meta.shard = 0;
  meta.layout = layout;
  meta.optimizer = "momentum";
  meta.state_slots = 1;
  MemoryStore store;
  ASSERT_TRUE(WriteShardRound(store, meta, capture).ok());

  auto kept = DenseStore::Create(layout.shards()[0].dense, layout.tensors(), 1,
                                 /*state_slots=*/3);
  ASSERT_TRUE(kept.ok());
  for (float& v : (*kept)->state()) v = 7.0f;
  auto restored =
      RestoreShard({&store}, 1, layout, 0, "momentum", kept->get(), nullptr);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  const std::span<const float> state = (*kept)->state();
  for (uint64_t k = 0; k < kKeys; ++k) {
    EXPECT_EQ(state[k], 0.5f);              // the velocity
    EXPECT_EQ(state[kKeys + k], 0.0f);      // C
    EXPECT_EQ(state[2 * kKeys + k], 0.0f);  // P
  }
  // Another optimizer's round, or a slot count no mode has, is refused.
  auto other = DenseStore::Create(layout.shards()[0].dense, layout.tensors(), 1,
                                  /*state_slots=*/2);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(
      RestoreShard({&store}, 1, layout, 0, "momentum", other->get(), nullptr)
          .ok());
}

}  // namespace
}  // namespace lockstep
