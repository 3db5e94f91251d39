// ShardRounds over a shard's real store (RocksDB): a round after a durable
// one of this process holds only the changes, a full one comes every K
// rounds, pruning keeps every round a kept round is built on, and a round
// of an earlier life that no longer resolves does not stop pruning (nor
// fail the rounds after it).
#include "server/shard/shard_rounds.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <memory>
#include <vector>

#include "server/snapshot/round_chain.h"
#include "server/store/rocksdb_store.h"
#include "tests/server/shard/shard_support.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

constexpr uint64_t kRoundsKeys = 1u << 20;  // 4 MiB: 4 chunks of 1 MiB

class ShardRoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        model_.Build(SgdJob(), OneTensorLayout(kRoundsKeys), 0, false, false)
            .ok());
  }

  std::string StorePath() const { return dir_.path() + "/shard-0"; }

  ShardRoundMeta Meta(uint64_t round) const {
    ShardRoundMeta meta;
    meta.round = round;
    meta.clock = static_cast<int64_t>(round) * 10;
    meta.layout = OneTensorLayout(kRoundsKeys);
    meta.job = SgdJob();
    meta.optimizer = "sgd";
    return meta;
  }

  // Takes round `round` (deleting older ones from `keep_from` on, as the
  // coordinator asks) and waits for its report.
  ShardRounds::Report TakeRound(uint64_t round, uint64_t keep_from) {
    if (auto failed = rounds_.Start(Meta(round), keep_from, &model_)) {
      return *failed;
    }
    pollfd ready{rounds_.fd(), POLLIN, 0};
    EXPECT_EQ(poll(&ready, 1, 30000), 1);
    auto report = rounds_.Finish(&model_);
    EXPECT_TRUE(report.has_value());
    return report.value_or(ShardRounds::Report{});
  }

  // The rounds the store holds now (read-only, beside the writer).
  std::vector<uint64_t> StoredRounds() const {
    auto store = RocksDbStore::OpenReadOnly(StorePath());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return {};
    auto rounds = (*store)->ListRounds();
    return rounds.ok() ? *rounds : std::vector<uint64_t>{};
  }

  TempDir dir_{"shard-rounds"};
  ShardModel model_;
  ShardRounds rounds_;
};

TEST_F(ShardRoundsTest, ChangesOnlyBetweenFullRoundsAndChainsAreKept) {
  rounds_.Open(dir_.path(), 0, /*full_every=*/3);
  std::vector<uint64_t> parents;
  for (uint64_t round = 1; round <= 4; ++round) {
    model_.dense().mutable_weights()[0] += 1;  // one chunk of four changes
    const ShardRounds::Report report = TakeRound(round, round);
    ASSERT_TRUE(report.status.ok()) << report.status.ToString();
    parents.push_back(report.parent);
    if (round == 3) {
      // Only round 3 is asked for, but it is built on 2 and 1.
      EXPECT_EQ(StoredRounds(), (std::vector<uint64_t>{1, 2, 3}));
    }
  }
  EXPECT_EQ(parents, (std::vector<uint64_t>{0, 1, 2, 0}));
  EXPECT_EQ(StoredRounds(), (std::vector<uint64_t>{4}));
}

TEST_F(ShardRoundsTest, ARoundOfAnEarlierLifeThatDoesNotResolveIsSkipped) {
  {
    // An earlier life left round 8, built on a round 7 that is gone.
    auto store = RocksDbStore::Open(StorePath());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    SnapshotCapture first(model_.dense().SnapshotArrays(), 1u << 20);
    first.Run();
    ASSERT_TRUE(WriteShardRound(**store, Meta(7), first).ok());
    model_.dense().mutable_weights()[0] += 1;
    SnapshotCapture second(model_.dense().SnapshotArrays(), 1u << 20, &first);
    second.Run();
    ShardRoundMeta eight = Meta(8);
    eight.parent = 7;
    ASSERT_TRUE(WriteShardRound(**store, eight, second).ok());
    ASSERT_TRUE((*store)->DeleteRound(7).ok());
    ASSERT_FALSE(ReadRoundChain(**store, 8).ok());
  }
  rounds_.Open(dir_.path(), 0, 3);
  const ShardRounds::Report report = TakeRound(5, 5);
  EXPECT_TRUE(report.status.ok()) << report.status.ToString();
  EXPECT_EQ(StoredRounds(), (std::vector<uint64_t>{5, 8}));
}

}  // namespace
}  // namespace lockstep
