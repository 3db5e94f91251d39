#include "coordinator/state/membership.h"

#include <gtest/gtest.h>

#include "tests/coordinator/recording_outbox.h"

namespace lockstep {
namespace {

Peer MakePeer(wire::Role role, int rank_hint, int64_t last_seen_ms) {
  Peer peer;
  peer.role = role;
  peer.rank_hint = rank_hint;
  peer.last_seen_ms = last_seen_ms;
  return peer;
}

TEST(MembershipTest, LivenessScanReturnsOnlyThePeersSilentPastTheLimit) {
  Membership members(2);
  Peer quiet = MakePeer(wire::Role::Worker, -1, 1000);
  members.Add("w-quiet", quiet);
  members.Add("w-talks", MakePeer(wire::Role::Worker, -1, 5000));
  Peer served = MakePeer(wire::Role::Server, -1, 1000);
  served.welcomed = true;
  members.Add("s-dead", served);
  // Not welcomed yet: a server waits silently for its Welcome.
  members.Add("s-waits", MakePeer(wire::Role::Server, -1, 0));
  Peer restoring = served;
  restoring.restoring = true;
  members.Add("s-restores", restoring);

  const SilentPeers silent = members.FindSilent(6000, 2000, 10000);
  ASSERT_EQ(silent.workers.size(), 1u);
  EXPECT_EQ(silent.workers[0].first, "w-quiet");
  EXPECT_EQ(silent.workers[0].second, "sent nothing for 5000 ms");
  ASSERT_EQ(silent.servers.size(), 1u);
  EXPECT_EQ(silent.servers[0].first, "s-dead");
  EXPECT_TRUE(silent.evaluator.empty());

  // Past the restore limit a restoring server is dead too.
  EXPECT_EQ(members.FindSilent(20000, 2000, 10000).servers.size(), 2u);
}

TEST(MembershipTest, SilentEvaluatorIsReportedApart) {
  Membership members(1);
  Peer evaluator = MakePeer(wire::Role::Evaluator, -1, 0);
  evaluator.welcomed = true;
  members.AddEvaluator("eval", evaluator);
  const SilentPeers silent = members.FindSilent(3000, 1000, 1000);
  EXPECT_EQ(silent.evaluator, "sent nothing for 3000 ms");
  EXPECT_TRUE(silent.workers.empty());
  members.RemoveEvaluator("eval");
  EXPECT_EQ(members.evaluator(), nullptr);
  EXPECT_TRUE(members.evaluator_id().empty());
}

TEST(MembershipTest, WelcomeNumbersWorkersByHintAndOrdersThemByRank) {
  Membership members(3);
  members.Add("a", MakePeer(wire::Role::Worker, -1, 0));
  members.Add("b", MakePeer(wire::Role::Worker, 0, 0));
  members.Add("c", MakePeer(wire::Role::Worker, -1, 0));
  EXPECT_FALSE(members.workers_welcomed());
  members.WelcomeWorkers();
  EXPECT_TRUE(members.workers_welcomed());
  EXPECT_EQ(members.worker_ids(), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(members.WorkerRanks(), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(members.LowestWorker(), 0);
  EXPECT_EQ(members.WorkerOfRank(1), "a");
  EXPECT_EQ(members.WorkerOfRank(7), std::nullopt);
}

TEST(MembershipTest, HeartbeatPeerIsFoundByRoleAndRank) {
  Membership members(2);
  members.Add("w0", MakePeer(wire::Role::Worker, 0, 0));
  members.Add("w1", MakePeer(wire::Role::Worker, 1, 0));
  EXPECT_EQ(members.FindByRank(wire::Role::Worker, 1), nullptr)
      << "no ranks before the welcome";
  members.WelcomeWorkers();
  EXPECT_EQ(members.FindByRank(wire::Role::Worker, 1), &members.at("w1"));
  EXPECT_EQ(members.FindByRank(wire::Role::Server, 1), nullptr);
  EXPECT_EQ(members.FindByRank(wire::Role::Worker, -1), nullptr);
}

TEST(MembershipTest, RejoiningWorkerTakesItsHintOrTheLowestFreeRank) {
  Membership members(3);
  members.Add("a", MakePeer(wire::Role::Worker, -1, 0));
  members.Add("b", MakePeer(wire::Role::Worker, -1, 0));
  members.Add("c", MakePeer(wire::Role::Worker, -1, 0));
  members.WelcomeWorkers();
  const Peer gone = members.RemoveWorker("b");
  EXPECT_EQ(gone.rank, 1);
  EXPECT_EQ(members.worker_ids(), (std::vector<std::string>{"a", "c"}));
  members.Add("new", MakePeer(wire::Role::Worker, 2, 0));  // rank 2 taken
  EXPECT_EQ(members.FreeWorkerRank("new"), 1);
  members.Add("hinted", MakePeer(wire::Role::Worker, 1, 0));
  EXPECT_EQ(members.FreeWorkerRank("hinted"), 1);
}

TEST(MembershipTest, ARemovedWorkersLateMessagesAreKnownForWhatTheyAre) {
  Membership members(3);
  members.Add("a", MakePeer(wire::Role::Worker, -1, 0));
  members.Add("b", MakePeer(wire::Role::Worker, -1, 0));
  members.Add("c", MakePeer(wire::Role::Worker, -1, 0));
  members.WelcomeWorkers();
  members.RemoveWorker("b");  // rank 1
  EXPECT_TRUE(members.RecentlyRemoved("b", wire::Role::Worker, 1));
  // Its heartbeat thread's socket, by the rank it speaks for.
  EXPECT_TRUE(members.RecentlyRemoved("b-beat", wire::Role::Worker, 1));
  // Strangers, and ranks live workers hold, are not.
  EXPECT_FALSE(members.RecentlyRemoved("x", wire::Role::Worker, 0));
  EXPECT_FALSE(members.RecentlyRemoved("x", wire::Role::Worker, 5));
  EXPECT_FALSE(members.RecentlyRemoved("x", wire::Role::Server, 1));
  EXPECT_FALSE(members.RecentlyRemoved("a", wire::Role::Worker, 0));
  // Once a joiner holds rank 1, a beat for rank 1 is the joiner's.
  members.Add("new", MakePeer(wire::Role::Worker, 1, 0));
  members.at("new").rank = 1;
  EXPECT_FALSE(members.RecentlyRemoved("b-beat", wire::Role::Worker, 1));
  EXPECT_TRUE(members.RecentlyRemoved("b", wire::Role::Worker, 1));
}

TEST(MembershipTest, LostServerLeavesItsSlotForTheOneThatReturns) {
  Membership members(1);
  members.Add("s0", MakePeer(wire::Role::Server, -1, 0));
  members.Add("s1", MakePeer(wire::Role::Server, -1, 0));
  members.AssignServerRanks();
  EXPECT_EQ(members.ServerSlotFor(-1), -1) << "no free slot";
  EXPECT_EQ(members.ServerSlotFor(1), 1) << "a shard's own hint";
  members.RemoveServer("s0");
  EXPECT_EQ(members.server_ids(), (std::vector<std::string>{"", "s1"}));
  EXPECT_EQ(members.ServerSlotFor(-1), 0);
  EXPECT_EQ(members.ServerSlotFor(9), 0);
  Peer back = MakePeer(wire::Role::Server, -1, 0);
  back.rank = 0;
  members.PlaceServer(0, "s0-new", back);
  EXPECT_EQ(members.server_ids(), (std::vector<std::string>{"s0-new", "s1"}));
}

TEST(MembershipTest, AllWorkersFinishedNeedsAtLeastOneWorker) {
  Membership members(2);
  EXPECT_FALSE(members.AllWorkersFinished());
  members.Add("a", MakePeer(wire::Role::Worker, -1, 0));
  members.Add("b", MakePeer(wire::Role::Worker, -1, 0));
  members.at("a").finished = true;
  EXPECT_FALSE(members.AllWorkersFinished());
  members.at("b").finished = true;
  EXPECT_TRUE(members.AllWorkersFinished());
}

TEST(MembershipTest, CapabilitiesKeepTheTightestMaxBatch) {
  WireTable<wire::Describe> describe([](flatbuffers::FlatBufferBuilder& fbb) {
    auto caps = fbb.CreateVectorOfStrings(
        {"max_batch=64", "gpu=yes", "max_batch=16", "max_batch=32"});
    return wire::CreateDescribe(fbb, 0, 0, false, 0, 0, 0, 0, caps);
  });
  WorkerCaps caps;
  TightenWorkerCaps((*describe).capabilities(), &caps);
  EXPECT_EQ(caps.max_batch, 16u);
  TightenWorkerCaps(nullptr, &caps);
  EXPECT_EQ(caps.max_batch, 16u);
}

}  // namespace
}  // namespace lockstep
