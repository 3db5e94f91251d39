#include "tools/launch/supervisor.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "snapshot_format/snapshot_manifest.h"

namespace lockstep {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

RoleProcess FailedRole(const std::string& role, int rank,
                       Supervisor::Clock::time_point started) {
  RoleProcess r;
  r.role = role;
  r.rank = rank;
  r.label = RoleLabel(role, rank);
  r.started = started;
  return r;
}

class SupervisorTest : public ::testing::Test {
 protected:
  const Supervisor::Clock::time_point t0_ = Supervisor::Clock::now();
};

TEST_F(SupervisorTest, BackoffDoublesFromHalfASecondUpToTen) {
  EXPECT_EQ(Supervisor::RestartDelayS(1), 0.5);
  EXPECT_EQ(Supervisor::RestartDelayS(2), 1.0);
  EXPECT_EQ(Supervisor::RestartDelayS(3), 2.0);
  EXPECT_EQ(Supervisor::RestartDelayS(4), 4.0);
  EXPECT_EQ(Supervisor::RestartDelayS(5), 8.0);
  EXPECT_EQ(Supervisor::RestartDelayS(6), 10.0);
  EXPECT_EQ(Supervisor::RestartDelayS(40), 10.0);
}

TEST_F(SupervisorTest, AFailedRoleIsDueAfterItsBackoff) {
  Supervisor supervisor(3);
  const RoleProcess worker = FailedRole("worker", 2, t0_);
  const auto failed = t0_ + seconds(1);
  const Supervisor::Decision decision = supervisor.RestartRole(
      worker, "worker 2 (pid 9) exited with status 1", failed);
  EXPECT_TRUE(decision.restart);
  EXPECT_EQ(decision.message,
            "worker 2 (pid 9) exited with status 1; restarting it in 0.5 s "
            "(restart 1 of at most 3)");
  EXPECT_TRUE(supervisor.TakeDue(failed + milliseconds(499)).empty());
  EXPECT_EQ(supervisor.pending(), 1u);
  const auto due = supervisor.TakeDue(failed + milliseconds(500));
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].role, "worker");
  EXPECT_EQ(due[0].rank, 2);
  EXPECT_EQ(supervisor.pending(), 0u);
}

TEST_F(SupervisorTest, EachRestartOfARoleWaitsTwiceAsLong) {
  Supervisor supervisor(3);
  const RoleProcess server = FailedRole("server", 0, t0_);
  ASSERT_TRUE(supervisor.RestartRole(server, "s", t0_).restart);
  supervisor.TakeDue(t0_ + seconds(1));
  const Supervisor::Decision second = supervisor.RestartRole(server, "s", t0_);
  EXPECT_EQ(second.message,
            "s; restarting it in 1.0 s (restart 2 of at most 3)");
  EXPECT_TRUE(supervisor.TakeDue(t0_ + milliseconds(999)).empty());
  EXPECT_EQ(supervisor.TakeDue(t0_ + milliseconds(1000)).size(), 1u);
}

TEST_F(SupervisorTest, TheMessageSaysTheCappedDelayWhole) {
  Supervisor supervisor(10);
  const RoleProcess server = FailedRole("server", 0, t0_);
  std::string message;
  for (int restart = 1; restart <= 6; ++restart) {
    message = supervisor.RestartRole(server, "s", t0_).message;
    supervisor.TakeDue(t0_ + seconds(20));
  }
  EXPECT_EQ(message, "s; restarting it in 10.0 s (restart 6 of at most 10)");
}

TEST_F(SupervisorTest, ARoleFailsTheJobOnceItUsedUpItsRestarts) {
  Supervisor supervisor(2);
  const RoleProcess worker = FailedRole("worker", 1, t0_);
  EXPECT_TRUE(supervisor.RestartRole(worker, "w", t0_).restart);
  EXPECT_TRUE(supervisor.RestartRole(worker, "w", t0_).restart);
  const Supervisor::Decision third = supervisor.RestartRole(worker, "w", t0_);
  EXPECT_FALSE(third.restart);
  EXPECT_EQ(third.message, "w; restarted 2 times already (--max-restarts)");
  EXPECT_EQ(supervisor.pending(), 2u);
}

TEST_F(SupervisorTest, ARoleThatRanAMinuteCountsFromZeroAgain) {
  Supervisor supervisor(1);
  ASSERT_TRUE(
      supervisor.RestartRole(FailedRole("worker", 1, t0_), "w", t0_).restart);
  // Restarted at t1; fails again just short of a stable run: no restarts
  // left.
  const auto t1 = t0_ + seconds(1);
  EXPECT_FALSE(supervisor
                   .RestartRole(FailedRole("worker", 1, t1), "w",
                                t1 + Supervisor::kStableRun - milliseconds(1))
                   .restart);

  Supervisor stable(1);
  ASSERT_TRUE(
      stable.RestartRole(FailedRole("worker", 1, t0_), "w", t0_).restart);
  const Supervisor::Decision again = stable.RestartRole(
      FailedRole("worker", 1, t1), "w", t1 + Supervisor::kStableRun);
  EXPECT_TRUE(again.restart);
  EXPECT_EQ(again.message,
            "w; restarting it in 0.5 s (restart 1 of at most 1)");
}

TEST_F(SupervisorTest, RestartsAreCountedPerRole) {
  Supervisor supervisor(1);
  EXPECT_TRUE(
      supervisor.RestartRole(FailedRole("worker", 1, t0_), "w1", t0_).restart);
  EXPECT_TRUE(
      supervisor.RestartRole(FailedRole("worker", 2, t0_), "w2", t0_).restart);
  EXPECT_TRUE(
      supervisor.RestartRole(FailedRole("server", 1, t0_), "s1", t0_).restart);
  EXPECT_FALSE(
      supervisor.RestartRole(FailedRole("worker", 1, t0_), "w1", t0_).restart);
}

TEST_F(SupervisorTest, DueRestartsComeOldestFirstAndTheOthersWait) {
  Supervisor supervisor(5);
  const RoleProcess worker = FailedRole("worker", 0, t0_);
  supervisor.RestartRole(FailedRole("server", 1, t0_), "s", t0_);
  supervisor.RestartRole(worker, "w", t0_);
  supervisor.RestartRole(worker, "w", t0_);  // its second: due after 1 s
  supervisor.RestartRole(FailedRole("worker", 3, t0_), "w", t0_);
  const auto due = supervisor.TakeDue(t0_ + milliseconds(600));
  ASSERT_EQ(due.size(), 3u);
  EXPECT_EQ(due[0].role, "server");
  EXPECT_EQ(due[1].rank, 0);
  EXPECT_EQ(due[2].rank, 3);
  EXPECT_EQ(supervisor.pending(), 1u);
  supervisor.ClearPending();
  EXPECT_TRUE(supervisor.TakeDue(t0_ + seconds(60)).empty());
}

class SupervisorJobTest : public SupervisorTest {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() /
                           "lockstep_supervisor_test_XXXXXX")
                              .string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Saves a manifest of a job with `workers` workers and `rounds` rounds
  // (round r at clock 10 r), complete as told.
  void SaveManifest(uint32_t workers, const std::vector<bool>& complete) {
    JobConfig job;
    job.workers = workers;
    SnapshotManifest manifest(job);
    for (size_t i = 0; i < complete.size(); ++i) {
      ManifestRound round;
      round.round = i + 1;
      round.clock = static_cast<int64_t>(10 * (i + 1));
      round.complete = complete[i];
      manifest.Record(round);
    }
    ASSERT_TRUE(manifest.Save(dir_).ok());
  }

  std::string dir_;
  const RoleProcess coordinator_ = FailedRole("coordinator", 0, t0_);
  std::optional<JobConfig> resume_;
};

TEST_F(SupervisorJobTest, AJobWithoutSnapshotsCannotBeResumed) {
  Supervisor supervisor(3);
  const Supervisor::Decision decision =
      supervisor.RestartJob(coordinator_, "c", "", t0_, &resume_);
  EXPECT_FALSE(decision.restart);
  EXPECT_EQ(decision.message,
            "c; the job takes no snapshots (--snapshot-every-clocks), so it "
            "cannot be resumed");
  EXPECT_FALSE(resume_.has_value());
}

TEST_F(SupervisorJobTest, AJobWithoutACompleteRoundCannotBeResumed) {
  Supervisor supervisor(3);
  const std::string expected =
      "c; no snapshot round is complete yet, so the job cannot be resumed";
  EXPECT_EQ(
      supervisor.RestartJob(coordinator_, "c", dir_, t0_, &resume_).message,
      expected);  // no manifest at all
  SaveManifest(4, {false, false});
  EXPECT_EQ(
      supervisor.RestartJob(coordinator_, "c", dir_, t0_, &resume_).message,
      expected);
  EXPECT_FALSE(resume_.has_value());
}

TEST_F(SupervisorJobTest, AJobResumesFromItsNewestCompleteRound) {
  SaveManifest(5, {true, true, false});
  Supervisor supervisor(3);
  const Supervisor::Decision decision =
      supervisor.RestartJob(coordinator_, "c", dir_, t0_, &resume_);
  EXPECT_TRUE(decision.restart);
  EXPECT_EQ(decision.message,
            "c; stopping every role and resuming the job from snapshot round "
            "2 (clock 20) in 0.5 s (restart 1 of at most 3)");
  ASSERT_TRUE(resume_.has_value());
  EXPECT_EQ(resume_->workers, 5u);
  EXPECT_EQ(supervisor.JobRestartDelay(), milliseconds(500));
  ASSERT_TRUE(
      supervisor.RestartJob(coordinator_, "c", dir_, t0_, &resume_).restart);
  EXPECT_EQ(supervisor.JobRestartDelay(), milliseconds(1000));
  // A restarted job starts its roles itself: nothing waits as a role.
  EXPECT_EQ(supervisor.pending(), 0u);
}

TEST_F(SupervisorJobTest, RolesThatReattachSeeOnlyTheCoordinatorRestarted) {
  SaveManifest(5, {true, true, false});
  Supervisor supervisor(3);
  const Supervisor::Decision decision = supervisor.RestartJob(
      coordinator_, "c", dir_, t0_, &resume_, /*roles_reattach=*/true);
  EXPECT_TRUE(decision.restart);
  EXPECT_EQ(decision.message,
            "c; restarting the coordinator, which takes the other roles back "
            "and resumes the job from snapshot round 2 (clock 20) in 0.5 s "
            "(restart 1 of at most 3)");
  ASSERT_TRUE(resume_.has_value());
}

TEST_F(SupervisorJobTest, AJobThatCannotBeResumedUsesUpNoRestart) {
  Supervisor supervisor(1);
  EXPECT_FALSE(
      supervisor.RestartJob(coordinator_, "c", "", t0_, &resume_).restart);
  SaveManifest(4, {true});
  const Supervisor::Decision decision =
      supervisor.RestartJob(coordinator_, "c", dir_, t0_, &resume_);
  EXPECT_TRUE(decision.restart);
  EXPECT_NE(decision.message.find("(restart 1 of at most 1)"),
            std::string::npos);
  const Supervisor::Decision last =
      supervisor.RestartJob(coordinator_, "c", dir_, t0_, &resume_);
  EXPECT_FALSE(last.restart);
  EXPECT_EQ(last.message, "c; restarted 1 times already (--max-restarts)");
}

}  // namespace
}  // namespace lockstep
