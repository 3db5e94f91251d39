#include "coordinator/rounds/snapshot_rounds.h"

#include <gtest/gtest.h>

#include "tests/coordinator/recording_outbox.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

class FakeContext : public RoundContext {
 public:
  int64_t LastCommittedClock() const override { return committed; }
  std::string PolicyName() const override { return "bsp"; }
  PolicyState PolicyStateNow() const override { return {}; }
  double TrainSecondsNow() const override { return train_s; }
  uint64_t SamplesNow() const override { return samples; }
  uint32_t Shards() const override { return 2; }
  bool Recovering() const override { return recovering; }

  int64_t committed = -1;
  bool recovering = false;
  double train_s = 0;
  uint64_t samples = 0;
};

// Rounds every 2 clocks of a job of two servers, in a fresh directory.
class SnapshotRoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    job_.servers = 2;
    job_.snapshot_dir = tmp_.path() + "/rounds";
    job_.snapshot_every_clocks = 2;
    job_.snapshot_keep = 3;
    Peer server;
    server.role = wire::Role::Server;
    members_.Add("s0", server);
    members_.Add("s1", server);
    members_.AssignServerRanks();
    const Status set_up = rounds_.SetUp(/*resume=*/false, 0);
    ASSERT_TRUE(set_up.ok()) << set_up.ToString();
  }

  void Report(uint64_t round, uint32_t shard, bool ok = true) {
    WireTable<wire::SnapshotDone> done([&](flatbuffers::FlatBufferBuilder& f) {
      return wire::CreateSnapshotDone(f, round, shard, 0, 1000, ok,
                                      f.CreateString(ok ? "" : "disk full"));
    });
    rounds_.HandleSnapshotDone(*done);
  }
  // Round `round` taken and reported by both shards.
  void CompleteRound(uint64_t round) {
    Report(round, 0);
    Report(round, 1);
  }
  const ManifestRound* OnDisk(uint64_t round) {
    manifest_ = SnapshotManifest::Load(job_.snapshot_dir);
    EXPECT_TRUE(manifest_.ok()) << manifest_.status().ToString();
    return manifest_.ok() ? manifest_->Find(round) : nullptr;
  }

  TempDir tmp_{"snapshot-rounds"};
  JobConfig job_;
  RecordingOutbox outbox_;
  Membership members_{1};
  FakeContext context_;
  SnapshotRounds rounds_{job_, outbox_, members_, context_};
  StatusOr<SnapshotManifest> manifest_ = NotFound("not loaded");
};

TEST_F(SnapshotRoundsTest, DueRoundStartsOnEveryServerAndIsRecordedOnce) {
  rounds_.MaybeStartRound(0, false);
  EXPECT_TRUE(outbox_.Of(wire::Body::SnapshotStart).empty());
  rounds_.MaybeStartRound(1, false);
  ASSERT_EQ(outbox_.To(wire::Body::SnapshotStart),
            (std::vector<std::string>{"s0", "s1"}));
  const auto* start =
      outbox_.Of(wire::Body::SnapshotStart)[0].body<wire::SnapshotStart>();
  EXPECT_EQ(start->round(), 1u);
  EXPECT_EQ(start->clock(), 1);

  Report(1, 0);
  EXPECT_EQ(OnDisk(1), nullptr) << "shard 1 has not reported";
  EXPECT_FALSE(rounds_.Settled()) << "a round is in flight";
  Report(1, 1);
  const ManifestRound* round = OnDisk(1);
  ASSERT_NE(round, nullptr);
  EXPECT_TRUE(round->complete);
  EXPECT_EQ(round->clock, 1);
  EXPECT_EQ(round->bytes, 2000u);
  EXPECT_EQ(round->policy, "bsp");
  EXPECT_EQ(rounds_.complete(), 1u);
  EXPECT_EQ(rounds_.LatestComplete()->round, 1u);
  EXPECT_TRUE(rounds_.Settled());
}

TEST_F(SnapshotRoundsTest, FailedShardFailsTheRound) {
  rounds_.MaybeStartRound(1, false);
  Report(1, 0);
  Report(1, 1, /*ok=*/false);
  const ManifestRound* round = OnDisk(1);
  ASSERT_NE(round, nullptr);
  EXPECT_FALSE(round->complete);
  EXPECT_EQ(rounds_.failed(), 1u);
  EXPECT_EQ(rounds_.LatestComplete(), nullptr);
}

TEST_F(SnapshotRoundsTest, LastClockRoundStartsOnceTheRoundInFlightFinished) {
  rounds_.MaybeStartRound(1, false);
  rounds_.MaybeStartRound(2, /*force=*/true);
  EXPECT_EQ(outbox_.Of(wire::Body::SnapshotStart).size(), 2u)
      << "one round at a time";
  CompleteRound(1);
  const auto starts = outbox_.Of(wire::Body::SnapshotStart);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[2].body<wire::SnapshotStart>()->round(), 2u);
  EXPECT_EQ(starts[2].body<wire::SnapshotStart>()->clock(), 2);
}

TEST_F(SnapshotRoundsTest, ToolHearsOfItsRoundOnceTheManifestNamesIt) {
  context_.committed = 4;
  rounds_.HandleRoundRequest("tool");
  const auto starts = outbox_.Of(wire::Body::SnapshotStart);
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].body<wire::SnapshotStart>()->clock(), 4);
  Report(1, 0);
  EXPECT_TRUE(outbox_.Of(wire::Body::SnapshotDone).empty());
  Report(1, 1);
  ASSERT_EQ(outbox_.To(wire::Body::SnapshotDone),
            (std::vector<std::string>{"tool"}));
  const auto* done =
      outbox_.Of(wire::Body::SnapshotDone)[0].body<wire::SnapshotDone>();
  EXPECT_EQ(done->round(), 1u);
  EXPECT_EQ(done->clock(), 4);
  EXPECT_TRUE(done->ok());
  EXPECT_NE(OnDisk(1), nullptr);
}

TEST_F(SnapshotRoundsTest, ToolIsRefusedBeforeACommitAndWhileRecovering) {
  rounds_.HandleRoundRequest("early");
  context_.committed = 3;
  context_.recovering = true;
  rounds_.HandleRoundRequest("during");
  ASSERT_EQ(outbox_.To(wire::Body::Error),
            (std::vector<std::string>{"early", "during"}));
  const auto errors = outbox_.Of(wire::Body::Error);
  EXPECT_EQ(errors[0].body<wire::Error>()->code(), wire::ErrorCode::NotReady);
  EXPECT_EQ(flatbuffers::GetString(errors[0].body<wire::Error>()->message()),
            "no snapshot round now: no clock is committed yet");
  EXPECT_EQ(flatbuffers::GetString(errors[1].body<wire::Error>()->message()),
            "no snapshot round now: the job is recovering from a lost server");
  EXPECT_TRUE(outbox_.Of(wire::Body::SnapshotStart).empty());
}

TEST_F(SnapshotRoundsTest, ARoundCarriesTheRunsProgress) {
  context_.train_s = 2.5;
  context_.samples = 1280;
  rounds_.MaybeStartRound(1, false);
  CompleteRound(1);
  const ManifestRound* round = OnDisk(1);
  ASSERT_NE(round, nullptr);
  EXPECT_EQ(round->train_s, 2.5);
  EXPECT_EQ(round->samples, 1280u);
}

TEST_F(SnapshotRoundsTest, FailedRestoreRollsBackFurtherOrEndsTheJob) {
  rounds_.MaybeStartRound(1, false);
  CompleteRound(1);
  rounds_.MaybeStartRound(3, false);
  CompleteRound(2);
  rounds_.BeginRollback(*rounds_.LatestComplete());
  EXPECT_EQ(rounds_.restore()->round, 2u);

  EXPECT_TRUE(rounds_.HandleRestoreFailed(0, 7, "no such round").ignored);
  context_.recovering = true;
  RestoreFailure live = rounds_.HandleRestoreFailed(0, 2, "checksum");
  EXPECT_FALSE(live.ignored);
  ASSERT_TRUE(live.previous.has_value());
  EXPECT_EQ(live.previous->round, 1u);
  const ManifestRound* failed = OnDisk(2);
  ASSERT_NE(failed, nullptr);
  EXPECT_FALSE(failed->complete);
  EXPECT_EQ(failed->error, "restore on shard 0: checksum");

  // With no complete round left the job ends, saying so.
  rounds_.BeginRollback(*rounds_.LatestComplete());
  context_.recovering = false;
  RestoreFailure last = rounds_.HandleRestoreFailed(1, 1, "checksum");
  EXPECT_FALSE(last.previous.has_value());
  EXPECT_EQ(last.abort.code(), StatusCode::kCorruption);
  EXPECT_NE(last.abort.message().find("no older complete round is left"),
            std::string::npos)
      << last.abort.message();
}

// A resume's damaged round at start-up: the same resume goes on from the
// round before (no recovery was under way).
TEST_F(SnapshotRoundsTest, ADamagedRoundAtStartUpFallsBackToTheOneBefore) {
  rounds_.MaybeStartRound(1, false);
  CompleteRound(1);
  rounds_.MaybeStartRound(3, false);
  CompleteRound(2);
  rounds_.BeginRollback(*rounds_.LatestComplete());
  ASSERT_FALSE(context_.recovering);
  RestoreFailure start_up = rounds_.HandleRestoreFailed(1, 2, "checksum");
  EXPECT_FALSE(start_up.ignored);
  ASSERT_TRUE(start_up.previous.has_value());
  EXPECT_EQ(start_up.previous->round, 1u);
  EXPECT_FALSE(OnDisk(2)->complete);
}

TEST_F(SnapshotRoundsTest, AFinishedJobIsRecordedAndNotResumedAsItWas) {
  context_.committed = 3;
  rounds_.MaybeStartRound(3, /*force=*/true);
  CompleteRound(1);
  rounds_.RecordFinished(3);
  ASSERT_NE(OnDisk(1), nullptr);
  EXPECT_EQ(manifest_->finished_clock(), 3);
  SnapshotRounds again(job_, outbox_, members_, context_);
  const Status same = again.SetUp(/*resume=*/true, 0);
  EXPECT_EQ(same.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(same.message().find("its job ran to its end (clock 3)"),
            std::string::npos)
      << same.message();
  JobConfig longer = job_;
  longer.max_clocks = 10;
  SnapshotRounds more(longer, outbox_, members_, context_);
  ASSERT_TRUE(more.SetUp(/*resume=*/true, 0).ok());
  EXPECT_EQ(OnDisk(1) != nullptr ? manifest_->finished_clock() : 0, -1)
      << "a resumed job has not run to its end";
}

TEST_F(SnapshotRoundsTest, LostServerAbandonsTheRoundInFlight) {
  context_.committed = 1;
  rounds_.HandleRoundRequest("tool");
  rounds_.AbandonForLoss("server 1 was lost");
  EXPECT_EQ(rounds_.failed(), 1u);
  ASSERT_EQ(outbox_.To(wire::Body::SnapshotDone),
            (std::vector<std::string>{"tool"}));
  EXPECT_FALSE(
      outbox_.Of(wire::Body::SnapshotDone)[0].body<wire::SnapshotDone>()->ok());
  EXPECT_TRUE(rounds_.Settled());
}

TEST_F(SnapshotRoundsTest,
       LostServerDropsTheLastRoundWaitingForTheOneInFlight) {
  rounds_.MaybeStartRound(1, false);
  rounds_.MaybeStartRound(2, /*force=*/true);  // waits for round 1
  ASSERT_EQ(outbox_.Of(wire::Body::SnapshotStart).size(), 2u);
  context_.recovering = true;
  rounds_.AbandonForLoss("server 1 was lost");
  EXPECT_EQ(rounds_.failed(), 1u);
  // Nothing starts during the recovery: the waiting round was of the state
  // being rolled back, and one shard is gone.
  EXPECT_EQ(outbox_.Of(wire::Body::SnapshotStart).size(), 2u);
  EXPECT_TRUE(rounds_.Settled());
}

TEST(SnapshotRoundsSetUpTest, RoundsNeedASnapshotDir) {
  JobConfig job;
  job.snapshot_every_clocks = 5;
  RecordingOutbox outbox;
  Membership members(1);
  FakeContext context;
  SnapshotRounds rounds(job, outbox, members, context);
  EXPECT_EQ(rounds.SetUp(false, 0).code(), StatusCode::kInvalidArgument);
  job.snapshot_every_clocks = 0;
  EXPECT_EQ(rounds.SetUp(true, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(rounds.SetUp(false, 0).ok());
}

}  // namespace
}  // namespace lockstep
