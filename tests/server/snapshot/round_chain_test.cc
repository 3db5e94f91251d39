// Incremental rounds: a chain of rounds that each hold only what changed
// since the one before (dense chunks whose bytes changed, sparse rows
// touched or new) restores bit for bit the state a full round of the same
// instant holds, with the round's own layout and re-sharded, and stores far
// fewer bytes when little changed.
#include "server/snapshot/round_chain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "optimizers/optimizer.h"
#include "server/model/dense_store.h"
#include "server/model/snapshot_capture.h"
#include "server/model/sparse_table.h"
#include "server/snapshot/shard_restore.h"
#include "server/snapshot/shard_round.h"
#include "server/store/memory_store.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kChainKeys = 3000;  // 12 KB of weights: 12 chunks of 1 KiB
constexpr uint32_t kRowDim = 2;        // floats a sparse row
constexpr size_t kChainChunk = 1024;

KeyLayout ChainLayout(uint32_t shards) {
  auto layout =
      KeyLayout::Build({{.name = "w", .shape = {kChainKeys}}}, shards, kRowDim);
  EXPECT_TRUE(layout.ok());
  return *layout;
}

// A one-shard model under Adam that a test updates between rounds, and
// the same rounds written twice: every round full, and incremental.
class RoundChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opt = Optimizer::Create({.name = "adam"});
    ASSERT_TRUE(opt.ok());
    opt_ = std::move(opt).value();
    const KeyLayout layout = ChainLayout(1);
    auto dense = DenseStore::Create(layout.shards()[0].dense, layout.tensors(),
                                    7, opt_->state_slots());
    ASSERT_TRUE(dense.ok());
    dense_ = std::move(dense).value();
    sparse_ = std::make_unique<SparseTable>(kRowDim, opt_->state_slots());
  }

  // Adam steps on dense keys [begin, end) and on sparse ids `ids` (sorted;
  // new ones get rows).
  void Update(uint64_t begin, uint64_t end, std::vector<uint64_t> ids) {
    ++step_;
    std::vector<float> grad(end - begin);
    for (float& g : grad) g = dist_(rng_);
    ASSERT_TRUE(
        dense_->ApplyGradient({begin, end}, grad.data(), *opt_, 0.01, step_)
            .ok());
    std::vector<float> rows(ids.size() * kRowDim);
    for (float& g : rows) g = dist_(rng_);
    sparse_->ApplyGradient(ids, rows.data(), *opt_, 0.01, step_);
  }

  std::vector<CaptureArray> Arrays() const {
    std::vector<CaptureArray> arrays = dense_->SnapshotArrays();
    for (CaptureArray& a : sparse_->SnapshotArrays()) arrays.push_back(a);
    return arrays;
  }

  ShardRoundMeta Meta(uint64_t round) const {
    ShardRoundMeta meta;
    meta.round = round;
    meta.clock = static_cast<int64_t>(round) * 10;
    meta.layout = ChainLayout(1);
    meta.optimizer = "adam";
    meta.state_slots = opt_->state_slots();
    meta.step = step_;
    meta.time = static_cast<double>(step_);
    meta.sparse_rows = sparse_->rows();
    return meta;
  }

  // Writes round `round` full into full_ and incremental (on the round
  // before) into incremental_; returns the incremental one's meta.
  ShardRoundMeta TakeRound(uint64_t round) {
    SnapshotCapture full(Arrays(), kChainChunk);
    full.Run();
    EXPECT_TRUE(WriteShardRound(full_, Meta(round), full).ok());
    auto capture =
        std::make_unique<SnapshotCapture>(Arrays(), kChainChunk, last_.get());
    capture->Run();
    ShardRoundMeta meta = Meta(round);
    meta.parent = last_ != nullptr ? round - 1 : 0;
    ShardRoundMeta written;
    EXPECT_TRUE(WriteShardRound(incremental_, meta, *capture, &written).ok());
    last_ = std::move(capture);
    return written;
  }

  std::unique_ptr<Optimizer> opt_;
  std::unique_ptr<DenseStore> dense_;
  std::unique_ptr<SparseTable> sparse_;
  int64_t step_ = 0;
  std::mt19937 rng_{11};
  std::normal_distribution<float> dist_;
  MemoryStore full_;
  MemoryStore incremental_;
  std::unique_ptr<SnapshotCapture> last_;
};

// Round `round` of `store` restored as shard `shard` of `shards`: the
// dense weights and state, then the sparse ids, weights and state.
struct ChainState {
  std::vector<float> dense;
  std::vector<uint64_t> ids;
  std::vector<float> rows;
  int64_t step = 0;
  bool operator==(const ChainState&) const = default;
};
ChainState RestoreRound(const MemoryStore& store, uint64_t round,
                        uint32_t shards, uint32_t shard) {
  const KeyLayout layout = ChainLayout(shards);
  auto dense = DenseStore::Create(layout.shards()[shard].dense,
                                  layout.tensors(), 1, 2, false);
  EXPECT_TRUE(dense.ok());
  SparseTable sparse(kRowDim, 2);
  auto restored = RestoreShard({&store}, round, layout, shard, "adam",
                               dense->get(), &sparse);
  EXPECT_TRUE(restored.ok()) << restored.status().ToString();
  ChainState out;
  out.dense.assign((*dense)->weights().begin(), (*dense)->weights().end());
  out.dense.insert(out.dense.end(), (*dense)->state().begin(),
                   (*dense)->state().end());
  out.ids.assign(sparse.ids().begin(), sparse.ids().end());
  out.rows.assign(sparse.weights().begin(), sparse.weights().end());
  for (int s = 0; s < 2; ++s) {
    out.rows.insert(out.rows.end(), sparse.state(s).begin(),
                    sparse.state(s).end());
  }
  out.step = restored.ok() ? restored->step : -1;
  return out;
}

TEST_F(RoundChainTest, IncrementalRoundsRestoreBitForBitAsFullRounds) {
  std::vector<uint64_t> first(400);
  std::iota(first.begin(), first.end(), 1000);
  Update(0, kChainKeys, first);
  EXPECT_EQ(TakeRound(1).parent, 0u);  // nothing to build on: full
  for (uint64_t round = 2; round <= 6; ++round) {
    // One dense chunk's keys, a few old rows and two new ones.
    const uint64_t begin = (round * 700) % (kChainKeys - 256);
    Update(begin, begin + 100,
           {1003, 1100 + round, 1399, 5000 + round, 6000 + round});
    const ShardRoundMeta meta = TakeRound(round);
    EXPECT_EQ(meta.parent, round - 1);
    const auto partial =
        std::count_if(meta.arrays.begin(), meta.arrays.end(),
                      [](const ShardRoundMeta::Array& a) { return a.partial; });
    EXPECT_EQ(partial, 3);  // dense weights and both state slots
    const uint64_t full_bytes = *full_.RoundBytes(round);
    const uint64_t bytes = *incremental_.RoundBytes(round);
    EXPECT_LT(bytes * 5, full_bytes) << "round " << round;
  }
  for (uint64_t round = 1; round <= 6; ++round) {
    const auto full = ReadShardRound(full_, round);
    const auto incremental = ReadShardRound(incremental_, round);
    ASSERT_TRUE(full.ok() && incremental.ok())
        << incremental.status().ToString();
    EXPECT_EQ(full->arrays, incremental->arrays) << "round " << round;
    for (uint32_t shards : {1u, 2u}) {
      for (uint32_t shard = 0; shard < shards; ++shard) {
        EXPECT_EQ(RestoreRound(full_, round, shards, shard),
                  RestoreRound(incremental_, round, shards, shard))
            << "round " << round << " onto shard " << shard << " of " << shards;
      }
    }
  }
  // And what round 6 restores is the model as it is now.
  const ChainState now = RestoreRound(incremental_, 6, 1, 0);
  EXPECT_TRUE(std::equal(dense_->weights().begin(), dense_->weights().end(),
                         now.dense.begin()));
  EXPECT_EQ(now.ids, std::vector<uint64_t>(sparse_->ids().begin(),
                                           sparse_->ids().end()));
}

TEST_F(RoundChainTest, ARoundThatChangedMostlyIsWrittenFull) {
  Update(0, kChainKeys, {1, 2, 3});
  TakeRound(1);
  Update(0, kChainKeys, {2});  // every dense chunk changes
  const ShardRoundMeta meta = TakeRound(2);
  EXPECT_EQ(meta.parent, 0u);
  for (const auto& a : meta.arrays) EXPECT_FALSE(a.partial) << a.name;
  const auto chain = ReadRoundChain(incremental_, 2);
  ASSERT_TRUE(chain.ok());
  EXPECT_EQ(chain->size(), 1u);
}

TEST_F(RoundChainTest, AMissingParentIsCorruptionNamingIt) {
  Update(0, kChainKeys, {1, 2, 3});
  TakeRound(1);
  Update(0, 10, {2});
  TakeRound(2);
  Update(0, 10, {3});
  TakeRound(3);
  const auto chain = ReadRoundChain(incremental_, 3);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  ASSERT_EQ(chain->size(), 3u);
  EXPECT_EQ(chain->front().round, 1u);
  ASSERT_TRUE(incremental_.DeleteRound(2).ok());
  const auto broken = ReadShardRound(incremental_, 3);
  EXPECT_EQ(broken.status().code(), StatusCode::kCorruption);
  EXPECT_THAT(broken.status().message(),
              HasSubstr("round 3 holds the changes since round 2, which the "
                        "store lacks"));
  auto dense = DenseStore::Create(ChainLayout(1).shards()[0].dense,
                                  ChainLayout(1).tensors(), 1, 2, false);
  SparseTable sparse(kRowDim, 2);
  EXPECT_EQ(RestoreShard({&incremental_}, 3, ChainLayout(1), 0, "adam",
                         dense->get(), &sparse)
                .status()
                .code(),
            StatusCode::kCorruption);
}

TEST_F(RoundChainTest, AParentRewrittenAfterItsChildIsRefused) {
  Update(0, kChainKeys, {1, 2, 3});
  TakeRound(1);
  Update(0, 10, {2});
  TakeRound(2);
  Update(0, 10, {3});
  ASSERT_EQ(TakeRound(3).parent, 2u);
  // A restarted shard wrote its own round 2 later (a number the
  // coordinator never recorded comes up again).
  ASSERT_TRUE(incremental_.DeleteRound(2).ok());
  SnapshotCapture capture(Arrays(), kChainChunk);
  capture.Run();
  ShardRoundMeta later = Meta(2);
  later.unix_time = 1e9;
  ASSERT_TRUE(WriteShardRound(incremental_, later, capture).ok());
  const auto round = ReadShardRound(incremental_, 3);
  EXPECT_EQ(round.status().code(), StatusCode::kCorruption);
  EXPECT_THAT(round.status().message(),
              HasSubstr("the stored round of that number is newer"));
}

TEST_F(RoundChainTest, AFlippedByteInAChangedChunkFailsTheRestore) {
  Update(0, kChainKeys, {1, 2, 3});
  TakeRound(1);
  Update(0, 10, {2});
  const ShardRoundMeta meta = TakeRound(2);
  ASSERT_EQ(meta.parent, 1u);
  ASSERT_TRUE(incremental_.FlipByte(2, "dense_weights", 0, 5).ok());
  const auto round = ReadShardRound(incremental_, 2);
  EXPECT_EQ(round.status().code(), StatusCode::kCorruption);
  EXPECT_THAT(round.status().message(),
              HasSubstr("round 2 array dense_weights chunk 0"));
}

}  // namespace
}  // namespace lockstep
