#include "coordinator/faults/departures.h"

#include <gtest/gtest.h>

#include "tests/coordinator/component_harness.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

// The components of a small job (2 workers, a third may join) with a
// snapshot folder (no schedule) and a Departures that lets leavers go at
// once.
class DeparturesTest : public ::testing::Test {
 protected:
  static JobConfig Job(const std::string& dir) {
    JobConfig job = SmallJob();
    job.max_workers = 3;
    job.data_order = "global";
    job.snapshot_dir = dir + "/rounds";
    return job;
  }
  void Leave(const std::string& id) {
    departures_.HandleLeave(id, h_.members.at(id), "terminated (SIGTERM)");
  }
  std::string ShutdownTo(const std::string& id) {
    for (const auto& m : h_.outbox.Of(wire::Body::Shutdown)) {
      if (m.id == id) {
        return flatbuffers::GetString(m.body<wire::Shutdown>()->reason());
      }
    }
    return "";
  }

  TempDir tmp_{"termination"};
  ComponentHarness h_{Job(tmp_.path())};
  Departures departures_{h_.job,     h_.outbox,      h_.members,
                         *h_.rounds, *h_.enrollment, /*settle_ms=*/0};
};

TEST_F(DeparturesTest, AWorkerLeavingAJobThatGoesOnIsReleased) {
  h_.StartTraining();
  h_.RunClock(0);
  h_.Register("w2", wire::Role::Worker);  // joins the running job
  h_.Describe("w2");
  ASSERT_EQ(h_.members.worker_ids().size(), 3u);
  Leave("w1");
  EXPECT_FALSE(departures_.Tick().has_value());
  EXPECT_FALSE(departures_.preempting());
  EXPECT_EQ(h_.members.Find("w1"), nullptr) << "removed as a dead worker is";
  ASSERT_EQ(h_.outbox.To(wire::Body::Shutdown),
            (std::vector<std::string>{"w1"}));
  const auto* shutdown =
      h_.outbox.Of(wire::Body::Shutdown)[0].body<wire::Shutdown>();
  EXPECT_EQ(shutdown->kind(), wire::ShutdownKind::Released);
  EXPECT_EQ(ShutdownTo("w1"), "left the job: terminated (SIGTERM)");
  EXPECT_TRUE(h_.abort.ok()) << h_.abort.ToString();
}

TEST_F(DeparturesTest, EveryWorkerLeavingPreemptsWithARoundOfTheNewestCommit) {
  h_.StartTraining();
  h_.RunClock(0);
  h_.outbox.Clear();
  for (const char* w : {"w0", "w1"}) Leave(w);
  EXPECT_FALSE(departures_.Tick().has_value()) << "the round is not durable";
  EXPECT_TRUE(departures_.preempting());
  EXPECT_EQ(h_.members.worker_ids().size(), 2u) << "nobody is let go";
  ASSERT_EQ(h_.outbox.To(wire::Body::SnapshotStart),
            (std::vector<std::string>{"s0", "s1"}));
  const auto* start =
      h_.outbox.Of(wire::Body::SnapshotStart)[0].body<wire::SnapshotStart>();
  EXPECT_EQ(start->clock(), 0);
  h_.ReportRound(start->round(), 0);
  EXPECT_FALSE(departures_.Tick().has_value());
  h_.ReportRound(start->round(), 1);
  const auto end = departures_.Tick();
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->kind, wire::ShutdownKind::Preempted);
  EXPECT_EQ(end->reason,
            "job preempted (every worker is being terminated): snapshot round "
            "1 (clock 0) is durable; the job resumes from it");
}

TEST_F(DeparturesTest, AServerLeavingPreemptsAtOnceAndLaterLeavesWait) {
  h_.StartTraining();
  h_.RunClock(0);
  h_.RunClock(1);
  Leave("s1");
  EXPECT_TRUE(departures_.preempting());
  Leave("w0");  // part of the preempted job: it waits for the Shutdown
  EXPECT_FALSE(departures_.Tick().has_value());
  EXPECT_NE(h_.members.Find("w0"), nullptr);
  EXPECT_TRUE(h_.outbox.Of(wire::Body::Shutdown).empty());
  const auto* start = h_.outbox.Of(wire::Body::SnapshotStart)
                          .back()
                          .body<wire::SnapshotStart>();
  EXPECT_EQ(start->clock(), 1) << "the newest commit";
  h_.ReportRound(start->round(), 0);
  h_.ReportRound(start->round(), 1);
  const auto end = departures_.Tick();
  ASSERT_TRUE(end.has_value());
  EXPECT_NE(end->reason.find("server 1 is being terminated"), std::string::npos)
      << end->reason;
  EXPECT_NE(end->reason.find("(clock 1) is durable"), std::string::npos);
}

TEST_F(DeparturesTest, BeforeTrainingNothingIsLostAndNoRoundIsTaken) {
  h_.Register("s0", wire::Role::Server);
  h_.Register("w0", wire::Role::Worker);
  Leave("w0");
  const auto end = departures_.Tick();
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->kind, wire::ShutdownKind::Preempted);
  EXPECT_NE(end->reason.find("nothing was trained yet: the job starts again"),
            std::string::npos)
      << end->reason;
  EXPECT_TRUE(h_.outbox.Of(wire::Body::SnapshotStart).empty());
}

TEST(DeparturesWithoutSnapshotsTest, APreemptedJobThatCannotResumeIsAborted) {
  ComponentHarness h(SmallJob());
  Departures termination(h.job, h.outbox, h.members, *h.rounds, *h.enrollment,
                         0);
  h.StartTraining();
  h.RunClock(0);
  termination.Preempt("the coordinator was terminated (SIGTERM)");
  const auto end = termination.Tick();
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->kind, wire::ShutdownKind::Aborted);
  EXPECT_NE(end->reason.find("this job has no --snapshot-dir, so it cannot "
                             "resume"),
            std::string::npos)
      << end->reason;
}

}  // namespace
}  // namespace lockstep
