#include "coordinator/faults/recovery.h"

#include <gtest/gtest.h>

#include "tests/coordinator/component_harness.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

TEST(RecoveryTest, ServerLostBeforeTrainingEndsTheJob) {
  ComponentHarness h(SmallJob());
  h.Register("s0", wire::Role::Server);
  h.Register("w0", wire::Role::Worker);
  h.recovery->LoseServer("s0", "sent nothing for 5000 ms", *h.enrollment);
  EXPECT_EQ(h.abort.code(), StatusCode::kUnavailable);
  EXPECT_NE(h.abort.message().find("sent nothing for 5000 ms before training "
                                   "started, so its part of the model is lost"),
            std::string::npos)
      << h.abort.message();
  EXPECT_FALSE(h.recovery->recovering());
  EXPECT_EQ(h.members.Find("s0"), nullptr);
}

TEST(RecoveryTest, ServerLostInAJobWithoutSnapshotsEndsIt) {
  ComponentHarness h(SmallJob());
  h.StartTraining();
  h.recovery->LoseServer("s1", "sent nothing", *h.enrollment);
  EXPECT_NE(h.abort.message().find("server 1 on host sent nothing and the job "
                                   "takes no snapshots"),
            std::string::npos)
      << h.abort.message();
  EXPECT_EQ(h.recovery->epoch(), 0u);
}

class RecoveryRollbackTest : public ::testing::Test {
 protected:
  static JobConfig Job(const std::string& dir) {
    JobConfig job = SmallJob();
    job.snapshot_dir = dir + "/rounds";
    job.snapshot_every_clocks = 1;
    return job;
  }

  TempDir tmp_{"recovery"};
  ComponentHarness h_{Job(tmp_.path())};
};

TEST_F(RecoveryRollbackTest, EveryShardRollsBackToTheLatestCompleteRound) {
  h_.StartTraining();
  h_.RunClock(0);  // round 1, of clock 0
  h_.ReportRound(1, 0);
  h_.ReportRound(1, 1);
  h_.RunClock(1);  // round 2 starts and is never finished
  h_.outbox.Clear();

  h_.recovery->LoseServer("s1", "sent nothing", *h_.enrollment);
  EXPECT_TRUE(h_.abort.ok()) << h_.abort.ToString();
  EXPECT_TRUE(h_.recovery->recovering());
  EXPECT_EQ(h_.recovery->epoch(), 1u);
  EXPECT_EQ(h_.recovery->recoveries(), 1u);
  EXPECT_EQ(h_.rounds->failed(), 1u) << "the round in flight is abandoned";
  ASSERT_EQ(h_.outbox.To(wire::Body::Welcome),
            (std::vector<std::string>{"s0"}));
  const auto* welcome =
      h_.outbox.Of(wire::Body::Welcome)[0].body<wire::Welcome>();
  EXPECT_EQ(welcome->restore_round(), 1u);
  EXPECT_EQ(welcome->epoch(), 1u);
  EXPECT_FALSE(h_.recovery->CurrentEpoch(h_.members.at("w0"), 0));
  EXPECT_FALSE(h_.recovery->CurrentEpoch(h_.members.at("w0"), 1))
      << "nothing counts while recovering";

  // The replacement takes the lost shard's rank and the same round.
  h_.Register("s1-new", wire::Role::Server, 1);
  ASSERT_EQ(h_.outbox.To(wire::Body::Welcome),
            (std::vector<std::string>{"s0", "s1-new"}));
  EXPECT_EQ(h_.outbox.Of(wire::Body::Welcome)[1]
                .body<wire::Welcome>()
                ->restore_round(),
            1u);
  EXPECT_EQ(h_.enrollment->layout().shards()[1].endpoint, "inproc://s1-new");

  h_.Restored("s0", 1);
  EXPECT_TRUE(h_.outbox.Of(wire::Body::Start).empty());
  h_.Restored("s1-new", 1);
  EXPECT_FALSE(h_.recovery->recovering());
  ASSERT_EQ(h_.outbox.To(wire::Body::Start),
            (std::vector<std::string>{"w0", "w1"}));
  const auto* start = h_.outbox.Of(wire::Body::Start)[0].body<wire::Start>();
  EXPECT_EQ(start->epoch(), 1u);
  EXPECT_EQ(start->clock(), 1) << "the round's clock + 1";
  EXPECT_TRUE(h_.recovery->CurrentEpoch(h_.members.at("w0"), 1));

  // Training goes on at clock 1 on both shards.
  h_.outbox.Clear();
  h_.RunClock(1);
  ASSERT_EQ(h_.outbox.To(wire::Body::Commit),
            (std::vector<std::string>{"s0", "s1-new"}));
  EXPECT_EQ(h_.outbox.Of(wire::Body::Commit)[0].body<wire::Commit>()->clock(),
            1);
}

TEST_F(RecoveryRollbackTest, RestoredOfAnotherEpochDoesNotCount) {
  h_.StartTraining();
  h_.RunClock(0);
  h_.ReportRound(1, 0);
  h_.ReportRound(1, 1);
  h_.recovery->LoseServer("s1", "sent nothing", *h_.enrollment);
  h_.Register("s1-new", wire::Role::Server, 1);
  WireTable<wire::Restored> old([](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateRestored(fbb, /*epoch=*/0, 1);
  });
  h_.recovery->HandleRestored(h_.members.at("s0"), *old, *h_.enrollment);
  h_.Restored("s1-new", 1);
  EXPECT_TRUE(h_.recovery->recovering()) << "shard 0 has not restored";
  EXPECT_TRUE(h_.recovery->CheckDeadline().ok());
}

TEST_F(RecoveryRollbackTest, FailedRestoreRollsBackToTheRoundBefore) {
  h_.StartTraining();
  h_.RunClock(0);
  h_.ReportRound(1, 0);
  h_.ReportRound(1, 1);
  h_.RunClock(1);
  h_.ReportRound(2, 0);
  h_.ReportRound(2, 1);
  h_.recovery->LoseServer("s1", "sent nothing", *h_.enrollment);
  EXPECT_EQ(h_.rounds->restore()->round, 2u);
  h_.outbox.Clear();
  h_.recovery->HandleRestoreFailed(0, 2, "checksum", *h_.enrollment);
  EXPECT_TRUE(h_.abort.ok()) << h_.abort.ToString();
  EXPECT_EQ(h_.recovery->epoch(), 2u);
  ASSERT_EQ(h_.outbox.To(wire::Body::Welcome),
            (std::vector<std::string>{"s0"}));
  EXPECT_EQ(h_.outbox.Of(wire::Body::Welcome)[0]
                .body<wire::Welcome>()
                ->restore_round(),
            1u);
}

}  // namespace
}  // namespace lockstep
