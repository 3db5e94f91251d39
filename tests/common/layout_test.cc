#include "common/layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/test_seed.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kUnitKeys = 16;  // shard boundaries fall on 16-key units
constexpr uint64_t kMaxId = std::numeric_limits<uint64_t>::max();

class KeyLayoutTest : public ::testing::Test {
 protected:
  // A layout with one tensor of `keys` keys split over `shards`.
  static KeyLayout Flat(uint64_t keys, uint32_t shards,
                        uint32_t sparse_dim = 0) {
    auto layout =
        KeyLayout::Build({{"w", {keys}, 0, 0, 0.0f}}, shards, sparse_dim);
    EXPECT_TRUE(layout.ok()) << layout.status().ToString();
    return std::move(layout).value();
  }

  // Checks the shards partition [0, dense_keys) in order, that every
  // boundary but the end lies on a unit, and that sizes differ by at most
  // one unit.
  static void ExpectBalancedCover(const KeyLayout& layout) {
    const auto& shards = layout.shards();
    ASSERT_FALSE(shards.empty());
    uint64_t next = 0;
    uint64_t smallest = kMaxId;
    uint64_t largest = 0;
    for (size_t s = 0; s < shards.size(); ++s) {
      SCOPED_TRACE("shard " + std::to_string(s));
      EXPECT_EQ(shards[s].shard, s);
      EXPECT_EQ(shards[s].dense.begin, next);
      ASSERT_LE(shards[s].dense.begin, shards[s].dense.end);
      if (shards[s].dense.end != layout.dense_keys()) {
        EXPECT_EQ(shards[s].dense.end % kUnitKeys, 0u);
      }
      next = shards[s].dense.end;
      smallest = std::min(smallest, shards[s].dense.size());
      largest = std::max(largest, shards[s].dense.size());
    }
    EXPECT_EQ(next, layout.dense_keys());
    EXPECT_LE(largest - smallest, kUnitKeys);
  }

  static void ExpectLookupMatchesRanges(const KeyLayout& layout, uint64_t key) {
    const uint32_t s = layout.ShardOfDenseKey(key);
    ASSERT_LT(s, layout.num_shards()) << "key " << key;
    const KeySpan& own = layout.shards()[s].dense;
    EXPECT_TRUE(key >= own.begin && key < own.end)
        << "key " << key << " mapped to shard " << s << " owning [" << own.begin
        << ", " << own.end << ")";
  }
};

TEST_F(KeyLayoutTest, AssignsTensorOffsetsInOrder) {
  auto layout = KeyLayout::Build(
      {{"fc0.weight", {3, 5}, 99, 0, 0.1f}, {"fc0.bias", {3}, 7, 0, 0.0f}}, 2,
      0);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  ASSERT_EQ(layout->tensors().size(), 2u);
  EXPECT_EQ(layout->tensors()[0].offset, 0u);
  EXPECT_EQ(layout->tensors()[0].size, 15u);
  EXPECT_EQ(layout->tensors()[1].offset, 15u);
  EXPECT_EQ(layout->tensors()[1].size, 3u);
  EXPECT_EQ(layout->dense_keys(), 18u);
  EXPECT_EQ(layout->FindTensor("fc0.bias"), &layout->tensors()[1]);
  EXPECT_EQ(layout->FindTensor("fc1.bias"), nullptr);
}

TEST_F(KeyLayoutTest, RejectsZeroShardsAndEmptyTensors) {
  EXPECT_FALSE(KeyLayout::Build({{"w", {4}, 0, 0, 0.0f}}, 0, 0).ok());
  auto zero_dim = KeyLayout::Build({{"w", {4, 0}, 0, 0, 0.0f}}, 1, 0);
  ASSERT_FALSE(zero_dim.ok());
  EXPECT_THAT(zero_dim.status().message(), HasSubstr("w"));
  EXPECT_FALSE(KeyLayout::Build({{"scalar", {}, 0, 0, 0.0f}}, 1, 0).ok());
}

TEST_F(KeyLayoutTest, ShardsAreBalancedContiguousAndCoverAllKeys) {
  const std::vector<uint64_t> key_counts = {1,
                                            2,
                                            15,
                                            16,
                                            17,
                                            31,
                                            32,
                                            33,
                                            100,
                                            255,
                                            256,
                                            257,
                                            1000,
                                            4097,
                                            101770,
                                            1u << 20,
                                            (1u << 20) + 5};
  const std::vector<uint32_t> shard_counts = {1,  2,  3,  4,  5,   7,   8,
                                              13, 16, 31, 64, 100, 1024};
  for (uint64_t keys : key_counts) {
    for (uint32_t shards : shard_counts) {
      SCOPED_TRACE("keys=" + std::to_string(keys) +
                   " shards=" + std::to_string(shards));
      const KeyLayout layout = Flat(keys, shards);
      EXPECT_EQ(layout.num_shards(), shards);
      ExpectBalancedCover(layout);
    }
  }
}

TEST_F(KeyLayoutTest, MoreShardsThanUnitsLeavesSomeShardsEmpty) {
  // 40 keys are 3 units: 5 shards get 3 non-empty ranges and 2 empty ones.
  const KeyLayout layout = Flat(40, 5);
  ExpectBalancedCover(layout);
  int empty = 0;
  for (const auto& s : layout.shards()) empty += s.dense.size() == 0 ? 1 : 0;
  EXPECT_EQ(empty, 2);
  for (uint64_t key = 0; key < 40; ++key) {
    ExpectLookupMatchesRanges(layout, key);
  }
}

TEST_F(KeyLayoutTest, DenseLookupAgreesWithRangesForEveryKey) {
  for (uint64_t keys : {1u, 16u, 17u, 100u, 513u, 3000u}) {
    for (uint32_t shards = 1; shards <= 12; ++shards) {
      SCOPED_TRACE("keys=" + std::to_string(keys) +
                   " shards=" + std::to_string(shards));
      const KeyLayout layout = Flat(keys, shards);
      for (uint64_t key = 0; key < keys; ++key) {
        ExpectLookupMatchesRanges(layout, key);
      }
    }
  }
}

TEST_F(KeyLayoutTest, DenseLookupAgreesWithRangesOnBigLayouts) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (uint64_t keys :
       {uint64_t{101770}, uint64_t{1} << 30, (uint64_t{1} << 36) + 3}) {
    for (uint32_t shards : {3u, 64u, 1000u}) {
      const KeyLayout layout = Flat(keys, shards);
      ExpectBalancedCover(layout);
      // Both sides of every boundary, then random keys.
      for (const auto& s : layout.shards()) {
        if (s.dense.size() == 0) continue;
        ExpectLookupMatchesRanges(layout, s.dense.begin);
        ExpectLookupMatchesRanges(layout, s.dense.end - 1);
      }
      std::uniform_int_distribution<uint64_t> pick(0, keys - 1);
      for (int i = 0; i < 2000; ++i) {
        ExpectLookupMatchesRanges(layout, pick(rng));
      }
    }
  }
}

TEST_F(KeyLayoutTest, SplitDenseCutsARangeAtShardBoundariesInKeyOrder) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (uint32_t shards : {1u, 3u, 7u, 20u}) {
    const KeyLayout layout = Flat(1000, shards);
    for (int trial = 0; trial < 300; ++trial) {
      std::uniform_int_distribution<uint64_t> pick(0, 1000);
      uint64_t a = pick(rng), b = pick(rng);
      if (a > b) std::swap(a, b);
      const auto pieces = layout.SplitDense({a, b});
      uint64_t next = a;
      for (size_t i = 0; i < pieces.size(); ++i) {
        const auto& p = pieces[i];
        EXPECT_EQ(p.keys.begin, next);
        EXPECT_LT(p.keys.begin, p.keys.end);
        const KeySpan& own = layout.shards()[p.shard].dense;
        EXPECT_GE(p.keys.begin, own.begin);
        EXPECT_LE(p.keys.end, own.end);
        if (i > 0) {
          EXPECT_GT(p.shard, pieces[i - 1].shard);
        }
        next = p.keys.end;
      }
      EXPECT_EQ(next, b) << "[" << a << ", " << b << ")";
    }
  }
}

TEST_F(KeyLayoutTest, SplitDenseOfAnEmptyRangeHasNoPieces) {
  const KeyLayout layout = Flat(100, 4);
  EXPECT_TRUE(layout.SplitDense({5, 5}).empty());
  EXPECT_TRUE(layout.SplitDense({9, 3}).empty());
}

TEST_F(KeyLayoutTest, SparsePartitionCoversTheWholeIdSpaceInOrder) {
  for (uint32_t shards : {1u, 2u, 3u, 5u, 7u, 8u, 64u, 1000u, 1024u}) {
    SCOPED_TRACE("shards=" + std::to_string(shards));
    const KeyLayout layout = Flat(16, shards, 1);
    const auto& s = layout.shards();
    EXPECT_EQ(s.front().sparse_begin, 0u);
    EXPECT_EQ(s.back().sparse_end, 0u);  // 0 means 2^64
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      EXPECT_EQ(s[i].sparse_end, s[i + 1].sparse_begin);
      EXPECT_LT(s[i].sparse_begin, s[i].sparse_end);
    }
    // Every range holds floor or ceil of 2^64 / shards ids.
    const unsigned __int128 space = static_cast<unsigned __int128>(1) << 64;
    const unsigned __int128 low = space / shards;
    for (size_t i = 0; i < s.size(); ++i) {
      const unsigned __int128 end =
          s[i].sparse_end == 0 ? space : s[i].sparse_end;
      const unsigned __int128 size = end - s[i].sparse_begin;
      EXPECT_TRUE(size == low || size == low + 1) << "shard " << i;
    }
  }
}

TEST_F(KeyLayoutTest, SparseLookupHonoursExactBoundariesAndExtremes) {
  for (uint32_t shards = 1; shards <= 70; ++shards) {
    SCOPED_TRACE("shards=" + std::to_string(shards));
    const KeyLayout layout = Flat(16, shards, 1);
    EXPECT_EQ(layout.ShardOfSparseId(0), 0u);
    EXPECT_EQ(layout.ShardOfSparseId(kMaxId), shards - 1);
    for (uint32_t s = 0; s < shards; ++s) {
      const ShardInfo& own = layout.shards()[s];
      EXPECT_EQ(layout.ShardOfSparseId(own.sparse_begin), s);
      EXPECT_EQ(layout.ShardOfSparseId(own.sparse_begin + 1), s);
      if (s > 0) {
        EXPECT_EQ(layout.ShardOfSparseId(own.sparse_begin - 1), s - 1);
      }
      if (own.sparse_end != 0) {
        EXPECT_EQ(layout.ShardOfSparseId(own.sparse_end - 1), s);
        EXPECT_EQ(layout.ShardOfSparseId(own.sparse_end), s + 1);
      }
    }
  }
}

TEST_F(KeyLayoutTest, SparseLookupAgreesWithOwnershipOnRandomIds) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (uint32_t shards : {3u, 6u, 1000u}) {
    const KeyLayout layout = Flat(16, shards, 1);
    for (int i = 0; i < 5000; ++i) {
      const uint64_t id = rng();
      const uint32_t s = layout.ShardOfSparseId(id);
      ASSERT_LT(s, shards);
      EXPECT_TRUE(layout.shards()[s].OwnsSparse(id))
          << "id " << id << " shard " << s;
    }
  }
}

TEST_F(KeyLayoutTest, SplitSortedIdsGivesOneOrderedPiecePerOwningShard) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (uint32_t shards : {1u, 2u, 3u, 7u, 16u}) {
    SCOPED_TRACE("shards=" + std::to_string(shards));
    const KeyLayout layout = Flat(16, shards, 1);
    std::vector<uint64_t> ids = {0, kMaxId, kMaxId, 0};
    for (const auto& s : layout.shards()) {
      ids.push_back(s.sparse_begin);
      if (s.sparse_begin > 0) ids.push_back(s.sparse_begin - 1);
    }
    for (int i = 0; i < 500; ++i) ids.push_back(rng());
    std::sort(ids.begin(), ids.end());
    const auto pieces = layout.SplitSortedIds(ids);
    uint64_t next = 0;
    std::set<uint32_t> seen;
    for (const auto& p : pieces) {
      EXPECT_EQ(p.keys.begin, next);
      ASSERT_LT(p.keys.begin, p.keys.end);
      ASSERT_LE(p.keys.end, ids.size());
      EXPECT_TRUE(seen.insert(p.shard).second) << "shard " << p.shard;
      for (uint64_t i = p.keys.begin; i < p.keys.end; ++i) {
        EXPECT_TRUE(layout.shards()[p.shard].OwnsSparse(ids[i]))
            << "id " << ids[i] << " in piece of shard " << p.shard;
      }
      next = p.keys.end;
    }
    EXPECT_EQ(next, ids.size());
    EXPECT_EQ(seen.size(), shards);  // boundary ids hit every shard
  }
}

TEST_F(KeyLayoutTest, SplitSortedIdsOfNoIdsHasNoPieces) {
  const KeyLayout layout = Flat(16, 4, 1);
  EXPECT_TRUE(layout.SplitSortedIds({}).empty());
}

TEST_F(KeyLayoutTest, SplitSortedIdsSkipsShardsWithoutIds) {
  const KeyLayout layout = Flat(16, 4, 1);
  const uint64_t third = layout.shards()[2].sparse_begin;
  const std::vector<uint64_t> ids = {1, 2, third, third + 9, kMaxId};
  const auto pieces = layout.SplitSortedIds(ids);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].shard, 0u);
  EXPECT_EQ(pieces[0].keys, (KeySpan{0, 2}));
  EXPECT_EQ(pieces[1].shard, 2u);
  EXPECT_EQ(pieces[1].keys, (KeySpan{2, 4}));
  EXPECT_EQ(pieces[2].shard, 3u);
  EXPECT_EQ(pieces[2].keys, (KeySpan{4, 5}));
}

TEST_F(KeyLayoutTest, SparseKeyOfIsInjectiveOnASample) {
  std::set<uint64_t> seen;
  constexpr uint64_t kCount = 200000;
  for (uint64_t f = 0; f < kCount; ++f) seen.insert(SparseKeyOf(f));
  // The 1001 highest features, kMaxId included.
  for (uint64_t f = kMaxId - 1000; f != 0; ++f) seen.insert(SparseKeyOf(f));
  EXPECT_EQ(seen.size(), kCount + 1001);
}

TEST_F(KeyLayoutTest, SparseKeyOfSpreadsConsecutiveFeaturesOverShards) {
  constexpr uint32_t kShards = 8;
  constexpr uint64_t kFeatures = 80000;
  const KeyLayout layout = Flat(16, kShards, 1);
  std::vector<uint64_t> count(kShards, 0);
  for (uint64_t f = 0; f < kFeatures; ++f) {
    ++count[layout.ShardOfSparseId(SparseKeyOf(f))];
  }
  const double expected = static_cast<double>(kFeatures) / kShards;
  for (uint32_t s = 0; s < kShards; ++s) {
    EXPECT_NEAR(static_cast<double>(count[s]), expected, 0.05 * expected)
        << "shard " << s;
  }
}

}  // namespace
}  // namespace lockstep
