#include "worker/push_frame.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

// 10 dense keys on 2 shards, sparse rows of 2 floats.
KeyLayout TwoShards() {
  TensorInfo t;
  t.name = "w";
  t.shape = {10};
  return KeyLayout::Build({t}, 2, 2).value();
}

TEST(PushFrameTest, ASortedIdListIsSplitByTheShardOwningEachId) {
  const KeyLayout layout = TwoShards();
  // Two ids shard 0 owns, then three shard 1 owns, ascending.
  const uint64_t first0 = layout.shards()[0].sparse_begin;
  const uint64_t first1 = layout.shards()[1].sparse_begin;
  auto ids = std::make_shared<std::vector<uint64_t>>(std::vector<uint64_t>{
      first0, first0 + 1, first1, first1 + 1, first1 + 2});
  const PushData data = SplitPush(layout, nullptr, ids, nullptr);
  ASSERT_EQ(data.id_pieces.size(), 2u);
  EXPECT_EQ(data.id_pieces[0].begin, 0u);
  EXPECT_EQ(data.id_pieces[0].end, 2u);
  EXPECT_EQ(data.id_pieces[1].begin, 2u);
  EXPECT_EQ(data.id_pieces[1].end, 5u);
  EXPECT_EQ(data.dim, 2u);
  const PushData dense_only = SplitPush(layout, nullptr, nullptr, nullptr);
  EXPECT_EQ(dense_only.id_pieces[1].size(), 0u);
}

// A shard's frame carries its dense slice and its rows of the caller's
// buffers, not copies, and the header's fields.
TEST(PushFrameTest, AShardsFrameSharesItsSliceOfTheCallersBuffers) {
  const KeyLayout layout = TwoShards();
  auto dense = std::make_shared<HostFloats>(10);
  for (int i = 0; i < 10; ++i) (*dense)[i] = static_cast<float>(i);
  auto ids = std::make_shared<std::vector<uint64_t>>(std::vector<uint64_t>{
      layout.shards()[1].sparse_begin, layout.shards()[1].sparse_begin + 1});
  auto rows =
      std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  const PushData data = SplitPush(layout, dense, ids, rows);
  const PushHeader header{7, 3, 16, 2, 1, wire::PushVerdict::Measure, 0, true};
  Message msg = PushFrame(header, layout.shards()[1], data, 4);
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  const wire::Push* push = msg.envelope->body_as_Push();
  ASSERT_NE(push, nullptr);
  EXPECT_EQ(push->request_id(), 7u);
  EXPECT_EQ(push->clock(), 3);
  EXPECT_EQ(push->batch(), 16u);
  EXPECT_EQ(push->shard(), 1u);
  EXPECT_TRUE(push->resent());
  EXPECT_EQ(msg.envelope->sender_rank(), 4);
  ASSERT_EQ(msg.payloads.size(), 3u);
  const ShardInfo& s = layout.shards()[1];
  EXPECT_EQ(msg.payloads[0].data(), dense->data() + s.dense.begin);
  EXPECT_EQ(msg.payloads[0].size(), s.dense.size() * sizeof(float));
  EXPECT_EQ(msg.payloads[1].data(), ids->data());
  EXPECT_EQ(msg.payloads[2].data(), rows->data());
  EXPECT_EQ(msg.payloads[2].size(), 4 * sizeof(float));
  // Shard 0 holds none of the rows: its frame is the dense slice alone.
  Message zero = PushFrame(header, layout.shards()[0], data, 4);
  EXPECT_EQ(zero.payloads.size(), 1u);
}

}  // namespace
}  // namespace lockstep
