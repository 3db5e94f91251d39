#include "coordinator/replicas/replica_placement.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

using Slots = std::vector<uint32_t>;

TEST(ReplicaPlacementTest, StartsOnARingOfTheNextServers) {
  const ReplicaPlacement p(4, 2);
  EXPECT_TRUE(p.OnRing());
  EXPECT_EQ(p.PrimarySlot(3), 3u);
  EXPECT_EQ(p.BackupSlots(0), (Slots{1, 2}));
  EXPECT_EQ(p.BackupSlots(3), (Slots{0, 1}));
  EXPECT_EQ(p.BackupsHeldBy(0), (Slots{2, 3}));
  EXPECT_EQ(ReplicaPlacement(3, 0).BackupSlots(1), Slots{});
}

TEST(ReplicaPlacementTest, ALostServersShardsGoToTheirFirstLiveBackup) {
  ReplicaPlacement p(3, 1);
  const ReplicaPlacement::Loss loss = p.LoseSlot(1);
  ASSERT_EQ(loss.promoted.size(), 1u);
  EXPECT_EQ(loss.promoted[0], std::make_pair(1u, 2u));  // shard 1 on slot 2
  EXPECT_EQ(loss.shrunk, Slots{0});  // slot 1 held shard 0's backup
  EXPECT_TRUE(loss.lost.empty());
  EXPECT_FALSE(p.OnRing());
  EXPECT_EQ(p.PrimarySlot(1), 2u);
  EXPECT_EQ(p.BackupSlots(1), Slots{});
  EXPECT_EQ(p.BackupSlots(0), Slots{});
  EXPECT_EQ(p.BackupSlots(2), Slots{0});
  // Slot 2 now serves shards 1 and 2; losing it loses shard 1 for good.
  const ReplicaPlacement::Loss second = p.LoseSlot(2);
  EXPECT_EQ(second.lost, Slots{1});
  EXPECT_EQ(second.promoted,
            (std::vector<std::pair<uint32_t, uint32_t>>{{2u, 0u}}));
  p.Reset();
  EXPECT_TRUE(p.OnRing());
  EXPECT_EQ(p.BackupSlots(1), Slots{2});
}

TEST(ReplicaPlacementTest, AReplacementsBackupsArePromotedOnlyOnceReady) {
  ReplicaPlacement p(2, 1);
  p.LoseSlot(1);  // shard 1 on slot 0, neither shard has a backup
  EXPECT_EQ(p.AddBackupsOn(1), (Slots{0, 1}));
  EXPECT_EQ(p.BackupsHeldBy(1), (Slots{0, 1}));
  EXPECT_TRUE(p.MarkReady(0, 1));
  EXPECT_FALSE(p.MarkReady(0, 1));  // once
  // Slot 0 is lost before shard 1's copy arrived: that shard is lost.
  const ReplicaPlacement::Loss loss = p.LoseSlot(0);
  EXPECT_EQ(loss.promoted,
            (std::vector<std::pair<uint32_t, uint32_t>>{{0u, 1u}}));
  EXPECT_EQ(loss.lost, Slots{1});
}

// With two backups, the one left after a promotion copies the new primary:
// until it is ready, losing that primary loses the shard.
TEST(ReplicaPlacementTest, ABackupLeftAfterAPromotionIsACopyOnlyOnceReady) {
  ReplicaPlacement p(3, 2);
  const ReplicaPlacement::Loss loss = p.LoseSlot(1);
  ASSERT_EQ(loss.promoted,
            (std::vector<std::pair<uint32_t, uint32_t>>{{1u, 2u}}));
  EXPECT_EQ(p.Recopy(1), Slots{0});
  ReplicaPlacement copying = p;
  EXPECT_EQ(copying.LoseSlot(2).lost, Slots{1});
  EXPECT_TRUE(p.MarkReady(1, 0));
  const ReplicaPlacement::Loss second = p.LoseSlot(2);
  EXPECT_TRUE(second.lost.empty());
  EXPECT_EQ(p.PrimarySlot(1), 0u);
  EXPECT_EQ(p.PrimarySlot(2), 0u);
}

TEST(ReplicaPlacementTest, WithoutReplicasALossLosesTheShard) {
  ReplicaPlacement p(2, 0);
  const ReplicaPlacement::Loss loss = p.LoseSlot(0);
  EXPECT_EQ(loss.lost, Slots{0});
  EXPECT_TRUE(loss.promoted.empty());
}

}  // namespace
}  // namespace lockstep
