#include "coordinator/liveness.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "tests/coordinator/component_harness.h"

namespace lockstep {
namespace {

// A heartbeat envelope from `role` `rank`, as a peer's socket sends it.
class HeartbeatFrom {
 public:
  HeartbeatFrom(wire::Role role, int rank) {
    flatbuffers::FlatBufferBuilder fbb(64);
    auto body = wire::CreateHeartbeat(fbb, 0);
    msg_.header = FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(), role,
                                 static_cast<uint32_t>(rank));
    EXPECT_TRUE(VerifyHeader(&msg_).ok());
  }
  const wire::Envelope& operator*() const { return *msg_.envelope; }

 private:
  Message msg_;
};

class LivenessTest : public ::testing::Test {
 protected:
  ComponentHarness h_{SmallJob()};
  Liveness liveness_{/*dead_after_ms=*/1000, /*register_timeout_ms=*/60000,
                     h_.outbox, h_.members, *h_.recorder};
};

TEST_F(LivenessTest, AHeartbeatIsAnsweredWithTheNewestCommit) {
  h_.StartTraining();
  h_.RunClock(0);
  h_.RunClock(1);
  h_.outbox.Clear();
  liveness_.ReplyHeartbeat("w0");
  const auto replies = h_.outbox.Of(wire::Body::Heartbeat);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].id, "w0");
  EXPECT_EQ(replies[0].body<wire::Heartbeat>()->clock(), 1);
}

TEST_F(LivenessTest, AWorkersSideSocketKeepsItsOwnerAlive) {
  h_.StartTraining();
  Peer& w1 = h_.members.at("w1");
  w1.last_seen_ms = NowMillis() - 900;
  h_.outbox.Clear();
  EXPECT_TRUE(liveness_.HandleSideHeartbeat(
      "w1-heartbeat", *HeartbeatFrom(wire::Role::Worker, w1.rank)));
  EXPECT_GE(w1.last_seen_ms, NowMillis() - 100);
  EXPECT_EQ(h_.outbox.To(wire::Body::Heartbeat),
            (std::vector<std::string>{"w1-heartbeat"}))
      << "answered on the socket it came from";
  // A rank nobody holds, or a role that has no side socket of that rank,
  // is not a member's heartbeat.
  EXPECT_FALSE(liveness_.HandleSideHeartbeat(
      "stranger", *HeartbeatFrom(wire::Role::Worker, 7)));
  EXPECT_FALSE(liveness_.HandleSideHeartbeat(
      "stranger", *HeartbeatFrom(wire::Role::Evaluator, 0)));
}

TEST_F(LivenessTest, OnlyPeersSilentPastTheLimitAreRemoved) {
  h_.StartTraining();
  h_.members.at("w0").last_seen_ms = NowMillis() - 5000;
  h_.members.at("w1").last_seen_ms = NowMillis() - 200;
  h_.members.at("s0").last_seen_ms = NowMillis();
  h_.members.at("s1").last_seen_ms = NowMillis();
  EXPECT_TRUE(liveness_.Check(*h_.enrollment, *h_.recovery).ok());
  EXPECT_EQ(h_.members.Find("w0"), nullptr);
  EXPECT_NE(h_.members.Find("w1"), nullptr);
  EXPECT_EQ(h_.members.worker_ids().size(), 1u);
  EXPECT_FALSE(h_.recovery->recovering());
}

TEST_F(LivenessTest, ASilentServerStartsARecovery) {
  h_.StartTraining();
  for (const char* id : {"w0", "w1", "s1"}) {
    h_.members.at(id).last_seen_ms = NowMillis();
  }
  h_.members.at("s0").last_seen_ms = NowMillis() - 5000;
  // No snapshot folder: a lost server cannot come back and the job ends.
  (void)liveness_.Check(*h_.enrollment, *h_.recovery);
  EXPECT_FALSE(h_.abort.ok()) << "a lost shard without rounds aborts the job";
}

}  // namespace
}  // namespace lockstep
