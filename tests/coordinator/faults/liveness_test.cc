#include "coordinator/faults/liveness.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "common/security/peer_ticket.h"
#include "common/transport/transport_keys.h"
#include "tests/coordinator/component_harness.h"
#include "tests/support/job_key_files.h"

namespace lockstep {
namespace {

// A heartbeat envelope from `role` `rank`, as a peer's socket sends it,
// showing `ticket`'s proof when given.
class HeartbeatFrom {
 public:
  HeartbeatFrom(wire::Role role, int rank,
                const std::optional<PeerTicket>& ticket = std::nullopt) {
    flatbuffers::FlatBufferBuilder fbb(128);
    const std::string proof = ticket ? HeartbeatProof(*ticket) : "";
    auto body = wire::CreateHeartbeat(
        fbb, 0, ticket ? ticket->incarnation : 0,
        ticket
            ? fbb.CreateVector(reinterpret_cast<const uint8_t*>(proof.data()),
                               proof.size())
            : 0);
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
  Liveness liveness_{/*dead_after_ms=*/1000,
                     /*register_timeout_ms=*/60000,
                     h_.outbox,
                     h_.members,
                     *h_.recorder,
                     h_.tickets};
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

// With job keys a side heartbeat counts only for the rank whose ticket it
// proves: another worker (a genuine key, its own ticket) cannot keep a
// dead rank alive, nor can one without a proof.
TEST_F(LivenessTest, ASideHeartbeatCountsOnlyForTheRankItsTicketProves) {
  const std::string dir = NewJobKeysDir();
  auto mint = TicketMint::Create(LoadJobKey(dir, KeyRole::kServer));
  ASSERT_TRUE(mint.ok()) << mint.status().message();
  InstallTransportKeys(LoadJobKey(dir, KeyRole::kCoordinator));
  h_.StartTraining();
  Peer& w1 = h_.members.at("w1");
  const int64_t stale = NowMillis() - 900;
  w1.last_seen_ms = stale;
  const PeerTicket others = mint->Mint(TicketRole::kWorker, w1.rank + 1);
  for (const std::optional<PeerTicket>& shown :
       {std::optional<PeerTicket>(), std::optional<PeerTicket>(others)}) {
    h_.outbox.Clear();
    EXPECT_TRUE(liveness_.HandleSideHeartbeat(
        "impostor", *HeartbeatFrom(wire::Role::Worker, w1.rank, shown)));
    EXPECT_EQ(w1.last_seen_ms, stale);
    EXPECT_TRUE(h_.outbox.To(wire::Body::Heartbeat).empty());
  }
  EXPECT_EQ(liveness_.refused_heartbeats(), 2u);
  // Its own ticket (a registration the coordinator gave it) counts.
  const PeerTicket own = mint->Mint(TicketRole::kWorker, w1.rank);
  EXPECT_TRUE(liveness_.HandleSideHeartbeat(
      "w1-heartbeat", *HeartbeatFrom(wire::Role::Worker, w1.rank, own)));
  EXPECT_GE(w1.last_seen_ms, NowMillis() - 100);
  InstallTransportKeys(std::nullopt);
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
