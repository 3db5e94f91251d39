#include "tools/launch/job_monitor.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/termination.h"
#include "tests/support/memory_file.h"

namespace lockstep {
namespace {

// The verdicts of JudgeExit for a job under way, by role and exit.
class JudgeExitTest : public ::testing::Test {
 protected:
  ExitVerdict Judge(const std::string& role, bool ok) const {
    return JudgeExit(role, role == "coordinator", Exit(ok ? 0 : 1), rules_);
  }
  static ExitInfo Exit(int code) {
    ExitInfo exit;
    exit.code = code;
    return exit;
  }
  ExitRules rules_;
};

TEST_F(JudgeExitTest, TheCoordinatorExitingZeroEndsTheJob) {
  EXPECT_EQ(Judge("coordinator", true), ExitVerdict::kJobDone);
}

TEST_F(JudgeExitTest, ACoordinatorOrServerFailureFailsTheJob) {
  EXPECT_EQ(Judge("coordinator", false), ExitVerdict::kJobFails);
  EXPECT_EQ(Judge("server", false), ExitVerdict::kJobFails);
}

TEST_F(JudgeExitTest, AFailedWorkerIsLostUnlessItMustStopTheJob) {
  EXPECT_EQ(Judge("worker", false), ExitVerdict::kWorkerLost);
  rules_.stop_on_worker_failure = true;
  EXPECT_EQ(Judge("worker", false), ExitVerdict::kJobFails);
}

TEST_F(JudgeExitTest, AFailedEvaluatorNeverStopsTraining) {
  EXPECT_EQ(Judge("evaluator", false), ExitVerdict::kEvaluatorLost);
  rules_.stop_on_worker_failure = true;
  EXPECT_EQ(Judge("evaluator", false), ExitVerdict::kEvaluatorLost);
}

TEST_F(JudgeExitTest, ARoleExitingZeroFirstIsTheCoordinatorsToJudge) {
  EXPECT_EQ(Judge("server", true), ExitVerdict::kLeftEarly);
  EXPECT_EQ(Judge("worker", true), ExitVerdict::kLeftEarly);
  // The exit of an old coordinator (not the job's current one).
  EXPECT_EQ(JudgeExit("coordinator", false, Exit(0), rules_),
            ExitVerdict::kLeftEarly);
}

// A worker whose machine lacks its device is let go, never restarted: it
// would fail the same way, and the job goes on without it.
TEST_F(JudgeExitTest, AWorkerWithoutItsDeviceIsLostNotRestarted) {
  rules_.supervise = true;
  EXPECT_EQ(JudgeExit("worker", false, Exit(kExitDeviceUnavailable), rules_),
            ExitVerdict::kWorkerLost);
  EXPECT_EQ(JudgeExit("evaluator", false, Exit(kExitDeviceUnavailable), rules_),
            ExitVerdict::kEvaluatorLost);
  EXPECT_EQ(JudgeExit("worker", false, Exit(1), rules_),
            ExitVerdict::kRestartRole);
  rules_.stop_on_worker_failure = true;
  EXPECT_EQ(JudgeExit("worker", false, Exit(kExitDeviceUnavailable), rules_),
            ExitVerdict::kJobFails);
}

// A role the coordinator told the job failed is not the job's cause: the
// coordinator's exit (and its log) is, under --supervise too.
TEST_F(JudgeExitTest, ARoleToldTheJobFailedIsTheCoordinatorsToJudge) {
  for (const char* role : {"server", "worker", "evaluator"}) {
    EXPECT_EQ(JudgeExit(role, false, Exit(kExitJobAborted), rules_),
              ExitVerdict::kLeftEarly)
        << role;
  }
  rules_.supervise = true;
  EXPECT_EQ(JudgeExit("server", false, Exit(kExitJobAborted), rules_),
            ExitVerdict::kLeftEarly);
  EXPECT_EQ(JudgeExit("coordinator", true, Exit(kExitJobAborted), rules_),
            ExitVerdict::kRestartJob);
}

TEST_F(JudgeExitTest, SuperviseRestartsFailedRolesAndTheJobForTheCoordinator) {
  rules_.supervise = true;
  rules_.stop_on_worker_failure = true;
  EXPECT_EQ(Judge("coordinator", false), ExitVerdict::kRestartJob);
  EXPECT_EQ(Judge("server", false), ExitVerdict::kRestartRole);
  EXPECT_EQ(Judge("worker", false), ExitVerdict::kRestartRole);
  EXPECT_EQ(Judge("evaluator", false), ExitVerdict::kRestartRole);
  EXPECT_EQ(Judge("coordinator", true), ExitVerdict::kJobDone);
  EXPECT_EQ(Judge("worker", true), ExitVerdict::kLeftEarly);
}

TEST_F(JudgeExitTest, AfterTheEndOnlyFailuresAreWorthAWarning) {
  rules_.coordinator_done = true;
  rules_.supervise = true;
  EXPECT_EQ(Judge("server", false), ExitVerdict::kFailedAfterTheEnd);
  EXPECT_EQ(Judge("worker", false), ExitVerdict::kFailedAfterTheEnd);
  EXPECT_EQ(Judge("server", true), ExitVerdict::kIgnored);
}

TEST_F(JudgeExitTest, NothingIsJudgedDuringTeardown) {
  rules_.judging = false;
  EXPECT_EQ(Judge("coordinator", true), ExitVerdict::kIgnored);
  EXPECT_EQ(Judge("coordinator", false), ExitVerdict::kIgnored);
  EXPECT_EQ(Judge("server", false), ExitVerdict::kIgnored);
}

// A monitor with no processes: its state and reports.
class JobMonitorTest : public ::testing::Test {
 protected:
  JobMonitorTest()
      : console_(out_.file(), err_.file(), /*tty=*/false, /*verbose=*/false),
        roles_(&console_, false),
        supervisor_(options_.max_restarts),
        monitor_(options_, &console_, &roles_, &supervisor_) {}

  MemoryFile out_;
  MemoryFile err_;
  LaunchOptions options_;
  Console console_;
  RoleProcesses roles_;
  Supervisor supervisor_;
  JobMonitor monitor_;
};

TEST_F(JobMonitorTest, RunsUntilSomethingStopsIt) {
  monitor_.StartClock();
  EXPECT_EQ(monitor_.State(), JobOutcome::kRunning);
  EXPECT_TRUE(monitor_.endpoint().empty());
  EXPECT_FALSE(monitor_.coordinator_done());
}

TEST_F(JobMonitorTest, TimesOutAfterTimeoutS) {
  options_.timeout_s = 0.001;
  monitor_.StartClock();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(monitor_.State(), JobOutcome::kTimedOut);
  monitor_.Fail("worker 1 failed", nullptr);
  EXPECT_EQ(monitor_.State(), JobOutcome::kFailed);
}

TEST_F(JobMonitorTest, TheFirstFailureIsReportedWithItsRolesLastLines) {
  RoleProcess worker;
  worker.label = "worker 1";
  worker.log_path = "/r/logs/worker-1.log";
  worker.tail = {"line a", "line b"};
  monitor_.Fail("worker 1 (pid 7) exited with status 3", &worker);
  monitor_.Fail("server 0 (pid 8) was killed by signal 9", nullptr);
  EXPECT_EQ(monitor_.State(), JobOutcome::kFailed);
  monitor_.ReportStopping(JobOutcome::kFailed, 4);
  monitor_.ReportStopped("/r");
  EXPECT_EQ(err_.text(),
            "lockstep-launch: worker 1 (pid 7) exited with status 3\n"
            "last lines of worker 1 (/r/logs/worker-1.log):\n"
            "  line a\n"
            "  line b\n"
            "lockstep-launch: run dir: /r\n");
  EXPECT_EQ(JobMonitor::ExitCode(JobOutcome::kFailed), 1);
}

TEST_F(JobMonitorTest, ATimeoutIsReportedWithWhatIsStopped) {
  options_.timeout_s = 2.5;
  monitor_.ReportStopping(JobOutcome::kTimedOut, 3);
  monitor_.ReportStopped("/r");
  EXPECT_EQ(err_.text(),
            "lockstep-launch: the job ran longer than --timeout-s 2.5; "
            "stopping 3 processes\n"
            "lockstep-launch: run dir: /r\n");
  EXPECT_EQ(JobMonitor::ExitCode(JobOutcome::kTimedOut), 124);
  EXPECT_EQ(JobMonitor::ExitCode(JobOutcome::kInterrupted), 130);
}

TEST_F(JobMonitorTest, AJobWithoutASummaryIsDoneWithAWarning) {
  monitor_.ReportDone("/r");
  EXPECT_EQ(err_.text(),
            "lockstep-launch: warning: the coordinator printed no @summary "
            "line\n");
  EXPECT_EQ(out_.text(), "run dir: /r\n");
}

}  // namespace
}  // namespace lockstep
