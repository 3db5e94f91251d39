#include "server/snapshot/shard_round.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "server/store/memory_store.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

ShardRoundMeta SampleMeta() {
  ShardRoundMeta meta;
  meta.round = 12;
  meta.clock = 340;
  meta.shard = 1;
  auto layout = KeyLayout::Build(
      {{.name = "w", .shape = {10, 7}}, {.name = "b", .shape = {7}}}, 2, 0);
  EXPECT_TRUE(layout.ok());
  meta.layout = *layout;
  meta.job.workers = 3;
  meta.job.optimizer = "adam";
  meta.job.lr = 0.0125;
  meta.optimizer = "adam";
  meta.state_slots = 2;
  meta.step = 339;
  meta.time = 87.25;  // on-arrival pushes count fractions
  meta.sparse_rows = 5;
  meta.contained = {{0, 338}, {2, 340}};
  meta.unix_time = 1.7e9 + 0.25;
  return meta;
}

std::vector<float> Values(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i) + 0.1f;
  return v;
}

std::vector<float> AsFloats(const std::string& bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(ShardRoundTest, MetaRoundTripsEveryField) {
  ShardRoundMeta meta = SampleMeta();
  meta.norm_scale = 0.375;
  const auto back = DecodeShardRoundMeta(EncodeShardRoundMeta(meta));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->round, 12u);
  EXPECT_EQ(back->clock, 340);
  EXPECT_EQ(back->shard, 1u);
  EXPECT_EQ(back->job, meta.job);
  EXPECT_EQ(back->layout.dense_keys(), 77u);
  EXPECT_EQ(back->layout.num_shards(), 2u);
  EXPECT_EQ(back->optimizer, "adam");
  EXPECT_EQ(back->state_slots, 2);
  EXPECT_EQ(back->step, 339);
  EXPECT_EQ(back->time, 87.25);
  EXPECT_EQ(back->sparse_rows, 5u);
  EXPECT_EQ(back->contained, meta.contained);
  EXPECT_EQ(back->unix_time, meta.unix_time);
  EXPECT_EQ(back->norm_scale, 0.375);
}

TEST(ShardRoundTest, GarbageMetaIsACorruption) {
  const auto bad = DecodeShardRoundMeta("definitely not a flatbuffer");
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(DecodeShardRoundMeta("").status().code(), StatusCode::kCorruption);
}

TEST(ShardRoundTest, WritesACaptureAndReadsItBackExactly) {
  std::vector<float> w = Values(1001, 0.5f);  // 4004 bytes: not a multiple
  std::vector<float> m = Values(1001, -2.f);
  std::vector<float> empty;
  SnapshotCapture capture({{"w", std::as_bytes(std::span(w))},
                           {"m", std::as_bytes(std::span(m))},
                           {"e", std::as_bytes(std::span(empty))}},
                          1024);
  capture.Run();
  MemoryStore store;
  ASSERT_TRUE(WriteShardRound(store, SampleMeta(), capture).ok());
  const auto round = ReadShardRound(store, 12);
  ASSERT_TRUE(round.ok()) << round.status().ToString();
  EXPECT_EQ(AsFloats(round->arrays.at("w")), w);
  EXPECT_EQ(AsFloats(round->arrays.at("m")), m);
  EXPECT_TRUE(round->arrays.at("e").empty());
  ASSERT_EQ(round->meta.arrays.size(), 3u);
  EXPECT_EQ(round->meta.arrays[0].name, "e");  // by name
  EXPECT_EQ(round->meta.arrays[1].name, "m");
  EXPECT_EQ(round->meta.arrays[1].chunks, 4u);
  EXPECT_EQ(round->meta.arrays[1].bytes, 4004u);
  EXPECT_EQ(round->meta.chunk_bytes, 1024u);
  EXPECT_EQ(round->meta.clock, 340);
}

TEST(ShardRoundTest, AnIncrementalRoundsMetaKeepsItsParentAndChunks) {
  ShardRoundMeta meta = SampleMeta();
  meta.parent = 11;
  meta.arrays = {{"dense_weights", 4096, 4, true, {1, 3}},
                 {"dense_state_0", 4096, 4, true, {}},
                 {"sparse_changed", 16, 1, false, {}}};
  const auto back = DecodeShardRoundMeta(EncodeShardRoundMeta(meta));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->parent, 11u);
  ASSERT_EQ(back->arrays.size(), 3u);
  EXPECT_TRUE(back->arrays[0].partial);
  EXPECT_EQ(back->arrays[0].stored, (std::vector<uint32_t>{1, 3}));
  EXPECT_TRUE(back->arrays[1].partial);  // nothing of it changed
  EXPECT_TRUE(back->arrays[1].stored.empty());
  EXPECT_FALSE(back->arrays[2].partial);
  // Chunks out of order or past the array, or a parent after the round.
  meta.arrays[0].stored = {3, 1};
  EXPECT_EQ(DecodeShardRoundMeta(EncodeShardRoundMeta(meta)).status().code(),
            StatusCode::kCorruption);
  meta.arrays[0].stored = {4};
  EXPECT_EQ(DecodeShardRoundMeta(EncodeShardRoundMeta(meta)).status().code(),
            StatusCode::kCorruption);
  meta.arrays[0].stored = {0};
  meta.parent = 12;
  EXPECT_EQ(DecodeShardRoundMeta(EncodeShardRoundMeta(meta)).status().code(),
            StatusCode::kCorruption);
}

TEST(ShardRoundTest, AFlippedByteFailsTheReadNamingTheChunk) {
  std::vector<float> w = Values(1000, 1);
  SnapshotCapture capture({{"w", std::as_bytes(std::span(w))}}, 1000);
  capture.Run();
  MemoryStore store;
  ASSERT_TRUE(WriteShardRound(store, SampleMeta(), capture).ok());
  ASSERT_TRUE(store.FlipByte(12, "w", 2, 17).ok());
  const auto round = ReadShardRound(store, 12);
  EXPECT_EQ(round.status().code(), StatusCode::kCorruption);
  EXPECT_THAT(round.status().message(), HasSubstr("round 12 array w chunk 2"));
}

TEST(ShardRoundTest, ARoundNotStoredIsNotFound) {
  MemoryStore store;
  EXPECT_EQ(ReadShardRound(store, 3).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace lockstep
