#include "common/wire/layout_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kLastSparseId = std::numeric_limits<uint64_t>::max();

// The key layout as a Layout message and back: what a peer's layout must
// satisfy before a worker or a server uses it.
class LayoutCodecTest : public ::testing::Test {
 protected:
  // A wire layout from hand-made parts, for FromWire's checks.
  struct WireShard {
    uint32_t shard;
    uint64_t begin;
    uint64_t end;
  };
  static flatbuffers::Offset<wire::Layout> HandMadeLayout(
      flatbuffers::FlatBufferBuilder& fbb,
      const std::vector<std::pair<uint64_t, uint64_t>>& tensors,  // size, off
      uint64_t dense_keys, const std::vector<WireShard>& shards) {
    std::vector<flatbuffers::Offset<wire::TensorSpec>> ts;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const std::vector<uint64_t> shape = {tensors[i].first};
      ts.push_back(wire::CreateTensorSpec(
          fbb, fbb.CreateString("t" + std::to_string(i)),
          fbb.CreateVector(shape), tensors[i].second, 0.5f));
    }
    std::vector<flatbuffers::Offset<wire::ShardSpec>> ss;
    for (const auto& s : shards) {
      wire::KeyRange dense(s.begin, s.end);
      wire::KeyRange sparse(0, 0);
      ss.push_back(wire::CreateShardSpec(fbb, s.shard, &dense, &sparse,
                                         fbb.CreateString("tcp://x")));
    }
    return wire::CreateLayout(fbb, fbb.CreateVector(ts), dense_keys, 0,
                              fbb.CreateVector(ss));
  }

  static const wire::Layout* Finish(flatbuffers::FlatBufferBuilder& fbb,
                                    flatbuffers::Offset<wire::Layout> root) {
    fbb.Finish(root);
    flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
    EXPECT_TRUE(verifier.VerifyBuffer<wire::Layout>(nullptr));
    return flatbuffers::GetRoot<wire::Layout>(fbb.GetBufferPointer());
  }
};

TEST_F(LayoutCodecTest, WireRoundTripKeepsEveryField) {
  auto built = KeyLayout::Build({{"fc0.weight", {256, 784}, 0, 0, 0.07f},
                                 {"fc0.bias", {256}, 0, 0, 0.0f},
                                 {"fc1.weight", {10, 256}, 0, 0, 0.15f}},
                                3, 1);
  ASSERT_TRUE(built.ok());
  KeyLayout layout = std::move(built).value();
  for (uint32_t s = 0; s < 3; ++s) {
    layout.set_endpoint(s, "tcp://127.0.0.1:" + std::to_string(7000 + s));
  }
  flatbuffers::FlatBufferBuilder fbb;
  auto back = LayoutFromWire(Finish(fbb, LayoutToWire(fbb, layout)));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->dense_keys(), layout.dense_keys());
  EXPECT_EQ(back->sparse_dim(), 1u);
  ASSERT_EQ(back->tensors().size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const TensorInfo& a = layout.tensors()[i];
    const TensorInfo& b = back->tensors()[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.offset, a.offset);
    EXPECT_EQ(b.size, a.size);
    EXPECT_EQ(b.init_scale, a.init_scale);
  }
  ASSERT_EQ(back->num_shards(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    const ShardInfo& a = layout.shards()[s];
    const ShardInfo& b = back->shards()[s];
    EXPECT_EQ(b.shard, a.shard);
    EXPECT_EQ(b.dense, a.dense);
    EXPECT_EQ(b.sparse_begin, a.sparse_begin);
    EXPECT_EQ(b.sparse_end, a.sparse_end);
    EXPECT_EQ(b.endpoint, a.endpoint);
  }
  EXPECT_EQ(back->ShardOfSparseId(kLastSparseId), 2u);
}

TEST_F(LayoutCodecTest, FromWireAcceptsAHandMadeValidLayout) {
  flatbuffers::FlatBufferBuilder fbb;
  auto root = HandMadeLayout(fbb, {{10, 0}, {6, 10}}, 16,
                             {{0, 0, 4}, {1, 4, 4}, {2, 4, 16}});
  auto layout = LayoutFromWire(Finish(fbb, root));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->ShardOfDenseKey(3), 0u);
  EXPECT_EQ(layout->ShardOfDenseKey(4), 2u);
  EXPECT_EQ(layout->ShardOfDenseKey(15), 2u);
}

TEST_F(LayoutCodecTest, FromWireRejectsNonContiguousShards) {
  struct Case {
    const char* what;
    std::vector<WireShard> shards;
  };
  const std::vector<Case> cases = {
      {"gap", {{0, 0, 8}, {1, 9, 16}}},
      {"overlap", {{0, 0, 8}, {1, 7, 16}}},
      {"not from zero", {{0, 1, 16}}},
      {"reversed range", {{0, 0, 8}, {1, 8, 4}, {2, 4, 16}}},
      {"short of dense_keys", {{0, 0, 8}, {1, 8, 15}}},
      {"past dense_keys", {{0, 0, 8}, {1, 8, 17}}},
      {"shard ids out of order", {{1, 0, 8}, {0, 8, 16}}},
      {"shard id skipped", {{0, 0, 8}, {2, 8, 16}}},
      {"no shards", {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    flatbuffers::FlatBufferBuilder fbb;
    auto root = HandMadeLayout(fbb, {{16, 0}}, 16, c.shards);
    auto layout = LayoutFromWire(Finish(fbb, root));
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(layout.status().message(), HasSubstr("shard"));
  }
}

TEST_F(LayoutCodecTest, FromWireRejectsBadTensorOffsets) {
  struct Case {
    const char* what;
    std::vector<std::pair<uint64_t, uint64_t>> tensors;
    uint64_t dense_keys;
  };
  const std::vector<Case> cases = {
      {"first not at 0", {{10, 1}, {6, 11}}, 16},
      {"gap between tensors", {{10, 0}, {6, 11}}, 16},
      {"overlapping tensors", {{10, 0}, {6, 9}}, 16},
      {"sizes below dense_keys", {{10, 0}, {5, 10}}, 16},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    flatbuffers::FlatBufferBuilder fbb;
    auto root =
        HandMadeLayout(fbb, c.tensors, c.dense_keys, {{0, 0, c.dense_keys}});
    auto layout = LayoutFromWire(Finish(fbb, root));
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST_F(LayoutCodecTest, FromWireRejectsMissingParts) {
  EXPECT_FALSE(LayoutFromWire(nullptr).ok());
  {
    flatbuffers::FlatBufferBuilder fbb;
    auto root = wire::CreateLayout(fbb, 0, 0, 0, 0);
    EXPECT_FALSE(LayoutFromWire(Finish(fbb, root)).ok());
  }
  {  // a tensor without a shape
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<wire::TensorSpec>> ts = {
        wire::CreateTensorSpec(fbb, fbb.CreateString("w"), 0, 0, 0.0f)};
    wire::KeyRange dense(0, 0);
    std::vector<flatbuffers::Offset<wire::ShardSpec>> ss = {
        wire::CreateShardSpec(fbb, 0, &dense, nullptr, 0)};
    auto root = wire::CreateLayout(fbb, fbb.CreateVector(ts), 0, 0,
                                   fbb.CreateVector(ss));
    auto layout = LayoutFromWire(Finish(fbb, root));
    ASSERT_FALSE(layout.ok());
    EXPECT_THAT(layout.status().message(), HasSubstr("shape"));
  }
  {  // a shard without a dense range
    flatbuffers::FlatBufferBuilder fbb;
    const std::vector<uint64_t> shape = {4};
    std::vector<flatbuffers::Offset<wire::TensorSpec>> ts = {
        wire::CreateTensorSpec(fbb, fbb.CreateString("w"),
                               fbb.CreateVector(shape), 0, 0.0f)};
    std::vector<flatbuffers::Offset<wire::ShardSpec>> ss = {
        wire::CreateShardSpec(fbb, 0, nullptr, nullptr, 0)};
    auto root = wire::CreateLayout(fbb, fbb.CreateVector(ts), 4, 0,
                                   fbb.CreateVector(ss));
    EXPECT_FALSE(LayoutFromWire(Finish(fbb, root)).ok());
  }
}

}  // namespace
}  // namespace lockstep
