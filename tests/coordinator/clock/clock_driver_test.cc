#include "coordinator/clock/clock_driver.h"

#include <gtest/gtest.h>

#include "sync_policies/policy_registry.h"
#include "tests/coordinator/recording_outbox.h"

namespace lockstep {
namespace {

class FakeListener : public ClockListener {
 public:
  void OnApplied(int64_t clock) override { applied.push_back(clock); }
  void OnRoundPoint(int64_t clock, bool force) override {
    round_points.emplace_back(clock, force);
  }
  bool Paused() const override { return false; }

  std::vector<int64_t> applied;
  std::vector<std::pair<int64_t, bool>> round_points;
};

// A BSP job of two servers and two workers (batches of 8), two clocks, and
// a learning rate halved every clock.
class ClockDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_.sync = "bsp";
    job_.servers = 2;
    job_.workers = 2;
    job_.batches = {8, 8};
    job_.max_clocks = 2;
    job_.train_samples = 160;
    job_.lr = 0.1;
    job_.lr_schedule = "step:1:0.5";
    job_.evaluators = 0;
    auto policy = CreateSyncPolicy(job_);
    ASSERT_TRUE(policy.ok()) << policy.status().ToString();
    auto recorder = RunRecorder::Create("", job_, (*policy)->name());
    ASSERT_TRUE(recorder.ok()) << recorder.status().ToString();
    recorder_ = std::move(recorder).value();
    for (const char* id : {"s0", "s1"})
      members_.Add(id, Role(wire::Role::Server));
    for (const char* id : {"w0", "w1"})
      members_.Add(id, Role(wire::Role::Worker));
    members_.AssignServerRanks();
    members_.WelcomeWorkers();
    driver_ = std::make_unique<ClockDriver>(job_, std::move(policy).value(),
                                            outbox_, members_, tickets_,
                                            *recorder_, listener_);
    ASSERT_TRUE(driver_->StartJob().ok());
    for (const char* id : {"w0", "w1"}) {
      members_.at(id).started = true;
      driver_->Join(members_.at(id), 0);
    }
  }

  static Peer Role(wire::Role role) {
    Peer peer;
    peer.role = role;
    return peer;
  }
  void Admit(const std::string& id, int64_t clock) {
    driver_->HandleAdmit(id, members_.at(id), clock);
  }
  void Done(const std::string& id, int64_t clock) {
    WireTable<wire::ClockDone> done([&](flatbuffers::FlatBufferBuilder& fbb) {
      return wire::CreateClockDone(fbb, clock, 8, 0.01, 0, 0, 0, 0.5, 1, 1);
    });
    driver_->HandleClockDone(members_.at(id), *done);
  }
  // Both workers run `clock` to its commit.
  void RunClock(int64_t clock) {
    Admit("w0", clock);
    Admit("w1", clock);
    Done("w0", clock);
    Done("w1", clock);
  }
  std::vector<SentMessage> AdmissionsTo(const std::string& id) const {
    std::vector<SentMessage> out;
    for (const auto& m : outbox_.Of(wire::Body::Admission)) {
      if (m.id == id) out.push_back(m);
    }
    return out;
  }

  JobConfig job_;
  RecordingOutbox outbox_;
  Membership members_{2};
  FakeListener listener_;
  TicketDesk tickets_;  // seals nothing: no job keys installed
  std::unique_ptr<RunRecorder> recorder_;
  std::unique_ptr<ClockDriver> driver_;
};

TEST_F(ClockDriverTest, CommitsToEveryServerOnceEveryWorkerReported) {
  Admit("w0", 0);
  Admit("w1", 0);
  ASSERT_EQ(outbox_.To(wire::Body::Admission),
            (std::vector<std::string>{"w0", "w1"}));
  const auto* admission =
      outbox_.Of(wire::Body::Admission)[0].body<wire::Admission>();
  EXPECT_TRUE(admission->go());
  EXPECT_EQ(admission->clock(), 0);
  EXPECT_EQ(admission->batch_quota(), 8u);

  Done("w0", 0);
  EXPECT_TRUE(outbox_.Of(wire::Body::Commit).empty());
  Done("w1", 0);
  const auto commits = outbox_.Of(wire::Body::Commit);
  ASSERT_EQ(outbox_.To(wire::Body::Commit),
            (std::vector<std::string>{"s0", "s1"}));
  const auto* commit = commits[0].body<wire::Commit>();
  EXPECT_EQ(commit->clock(), 0);
  EXPECT_EQ(std::vector<uint32_t>(commit->workers()->begin(),
                                  commit->workers()->end()),
            (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(listener_.applied, (std::vector<int64_t>{0}));
  EXPECT_EQ(listener_.round_points,
            (std::vector<std::pair<int64_t, bool>>{{0, false}}));
  EXPECT_EQ(driver_->LastCommittedClock(), 0);
}

TEST_F(ClockDriverTest, LastCommitForcesARound) {
  RunClock(0);
  outbox_.Clear();
  RunClock(1);
  const auto commits = outbox_.Of(wire::Body::Commit);
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_EQ(commits[1].body<wire::Commit>()->clock(), 1);
  EXPECT_EQ(listener_.round_points.back(), std::make_pair(int64_t{1}, true));
}

TEST_F(ClockDriverTest, AdmissionWaitsForTheCommitOfTheClockBefore) {
  Admit("w0", 0);
  Admit("w1", 0);
  Done("w0", 0);
  Admit("w0", 1);
  EXPECT_EQ(AdmissionsTo("w0").size(), 1u) << "clock 1 waits for clock 0";
  EXPECT_EQ(members_.at("w0").pending_admit, 1);
  Done("w1", 0);
  const auto to_w0 = AdmissionsTo("w0");
  ASSERT_EQ(to_w0.size(), 2u);
  EXPECT_EQ(to_w0[1].body<wire::Admission>()->clock(), 1);
  EXPECT_FALSE(members_.at("w0").pending_admit);
}

TEST_F(ClockDriverTest, WorkerPastTheLastClockIsToldTheJobIsOver) {
  RunClock(0);
  RunClock(1);
  outbox_.Clear();
  Admit("w1", 2);
  ASSERT_EQ(outbox_.To(wire::Body::Admission),
            (std::vector<std::string>{"w1"}));
  const auto* over =
      outbox_.Of(wire::Body::Admission)[0].body<wire::Admission>();
  EXPECT_TRUE(over->finished());
  EXPECT_FALSE(over->go());
  EXPECT_EQ(over->batch_quota(), 0u);
  EXPECT_TRUE(members_.at("w1").finished);
  EXPECT_FALSE(driver_->evaluation().training_over());

  // The last worker finished: the lowest-ranked one evaluates the final
  // model (no evaluator in this job).
  Admit("w0", 2);
  const auto to_w0 = AdmissionsTo("w0");
  ASSERT_EQ(to_w0.size(), 2u);
  const auto* final_eval = to_w0[1].body<wire::Admission>();
  EXPECT_TRUE(final_eval->evaluate());
  EXPECT_TRUE(final_eval->finished());
  EXPECT_EQ(final_eval->clock(), job_.max_clocks);
  EXPECT_TRUE(driver_->evaluation().training_over());

  WireTable<wire::Evaluation> eval([](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateEvaluation(fbb, 2, 0.1, 0.9, 100, /*final=*/true);
  });
  driver_->evaluation().HandleEvaluation("w1", *eval);
  EXPECT_FALSE(driver_->evaluation().final_eval_received())
      << "w1 was not asked";
  driver_->evaluation().HandleEvaluation("w0", *eval);
  EXPECT_TRUE(driver_->evaluation().final_eval_received());
}

TEST_F(ClockDriverTest, WorkerLeavingLetsTheClockCommitWithoutIt) {
  Admit("w0", 0);
  Admit("w1", 0);
  Done("w0", 0);
  const Peer gone = members_.RemoveWorker("w1");
  driver_->WorkerLeft(gone);
  const auto commits = outbox_.Of(wire::Body::Commit);
  ASSERT_EQ(commits.size(), 2u);
  const auto* commit = commits[0].body<wire::Commit>();
  EXPECT_EQ(commit->clock(), 0);
  EXPECT_EQ(std::vector<uint32_t>(commit->workers()->begin(),
                                  commit->workers()->end()),
            (std::vector<uint32_t>{0}));
}

TEST_F(ClockDriverTest, PolicyStateOfABarrierJobHasNoSampleCount) {
  RunClock(0);
  EXPECT_EQ(driver_->PolicyStateNow().count(kProcessedSamplesKey), 0u);
}

}  // namespace
}  // namespace lockstep
