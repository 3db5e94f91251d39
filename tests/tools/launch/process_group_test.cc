#include "tools/launch/process_group.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>

#include "tests/tools/launch/process_alive.h"

namespace lockstep {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// True if `pid` is a live process (a zombie counts as dead: in containers
// the adopting init may never reap it).
bool WaitUntilDead(pid_t pid, milliseconds limit) {
  const auto deadline = steady_clock::now() + limit;
  while (ProcessAlive(pid)) {
    if (steady_clock::now() > deadline) return false;
    usleep(10000);
  }
  return true;
}

class ProcessGroupTest : public ::testing::Test {
 protected:
  // Polls until every child exited or `limit` passed; returns all events.
  ChildEvents PollUntilAllExited(milliseconds limit = milliseconds(10000)) {
    ChildEvents all;
    const auto deadline = steady_clock::now() + limit;
    while (group_.running() > 0 && steady_clock::now() < deadline) {
      all.Append(group_.Poll(milliseconds(100)));
    }
    EXPECT_EQ(group_.running(), 0u) << "children still running after limit";
    return all;
  }

  // Polls until a line is read (or `limit` passed); returns it.
  std::string FirstLine(milliseconds limit = milliseconds(10000)) {
    const auto deadline = steady_clock::now() + limit;
    while (steady_clock::now() < deadline) {
      ChildEvents events = group_.Poll(milliseconds(100));
      if (!events.lines.empty()) return events.lines.front().text;
    }
    ADD_FAILURE() << "no line within the limit";
    return "";
  }

  ProcessGroup group_;
};

TEST_F(ProcessGroupTest, CapturesStdoutStderrAndExitStatus) {
  StatusOr<pid_t> pid =
      group_.Spawn({"/bin/sh", "-c", "echo hi; echo err >&2; exit 3"}, "sh");
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ChildEvents events = PollUntilAllExited();
  ASSERT_EQ(events.lines.size(), 2u);
  for (const ChildLine& line : events.lines) {
    EXPECT_EQ(line.pid, *pid);
    EXPECT_EQ(line.name, "sh");
    EXPECT_EQ(line.text, line.from_stderr ? "err" : "hi");
  }
  EXPECT_NE(events.lines[0].from_stderr, events.lines[1].from_stderr);
  ASSERT_EQ(events.exits.size(), 1u);
  EXPECT_EQ(events.exits[0].pid, *pid);
  EXPECT_FALSE(events.exits[0].how.signaled);
  EXPECT_EQ(events.exits[0].how.code, 3);
  EXPECT_EQ(events.exits[0].how.ToString(), "exited with status 3");
  // Reaped: the pid no longer exists, not even as a zombie.
  EXPECT_EQ(kill(*pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(ProcessGroupTest, KeepsLineOrderAndPartialLastLine) {
  ASSERT_TRUE(
      group_.Spawn({"/bin/sh", "-c", "seq 1 20000; printf tail"}, "seq").ok());
  ChildEvents events = PollUntilAllExited();
  ASSERT_EQ(events.lines.size(), 20001u);
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(events.lines[i].text, std::to_string(i + 1));
  }
  EXPECT_EQ(events.lines.back().text, "tail");
  ASSERT_EQ(events.exits.size(), 1u);
  EXPECT_TRUE(events.exits[0].how.ok());
}

TEST_F(ProcessGroupTest, StdinIsDevNull) {
  ASSERT_TRUE(group_.Spawn({"cat"}, "cat").ok());
  ChildEvents events = PollUntilAllExited(milliseconds(5000));
  ASSERT_EQ(events.exits.size(), 1u);
  EXPECT_TRUE(events.exits[0].how.ok());
}

TEST_F(ProcessGroupTest, SpawnOfMissingProgramFails) {
  StatusOr<pid_t> pid = group_.Spawn({"/nonexistent/lockstep-nothing"}, "x");
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), StatusCode::kNotFound);
  EXPECT_NE(pid.status().message().find("/nonexistent/lockstep-nothing"),
            std::string::npos);
  EXPECT_EQ(group_.running(), 0u);
}

TEST_F(ProcessGroupTest, TerminateAllStopsASleepingChild) {
  StatusOr<pid_t> pid = group_.Spawn({"sleep", "100"}, "sleep");
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  const auto start = steady_clock::now();
  ChildEvents events = group_.TerminateAll(milliseconds(3000));
  EXPECT_LT(steady_clock::now() - start, milliseconds(2500));
  ASSERT_EQ(events.exits.size(), 1u);
  EXPECT_TRUE(events.exits[0].how.signaled);
  EXPECT_EQ(events.exits[0].how.code, SIGINT);
  EXPECT_EQ(group_.running(), 0u);
  EXPECT_EQ(kill(*pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(ProcessGroupTest, SigkillsAChildThatIgnoresSigint) {
  // The shell prints its helper's pid once the trap is in place.
  StatusOr<pid_t> pid = group_.Spawn(
      {"/bin/sh", "-c", "trap '' INT; sleep 100 & echo $!; wait"}, "stubborn");
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  const pid_t helper = static_cast<pid_t>(std::stol(FirstLine()));
  ASSERT_TRUE(ProcessAlive(helper));
  const auto start = steady_clock::now();
  ChildEvents events = group_.TerminateAll(milliseconds(300));
  EXPECT_GE(steady_clock::now() - start, milliseconds(300));
  ASSERT_EQ(events.exits.size(), 1u);
  EXPECT_TRUE(events.exits[0].how.signaled);
  EXPECT_EQ(events.exits[0].how.code, SIGKILL);
  EXPECT_EQ(kill(*pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  // The helper was in the child's process group and went with it.
  EXPECT_TRUE(WaitUntilDead(helper, milliseconds(5000)));
}

TEST_F(ProcessGroupTest, ExitOfAChildKillsItsLeftoverHelpers) {
  ASSERT_TRUE(
      group_.Spawn({"/bin/sh", "-c", "sleep 100 & echo $!"}, "sh").ok());
  const pid_t helper = static_cast<pid_t>(std::stol(FirstLine()));
  PollUntilAllExited();
  EXPECT_TRUE(WaitUntilDead(helper, milliseconds(5000)));
}

TEST_F(ProcessGroupTest, DestructorKillsRunningChildren) {
  pid_t pid = 0;
  {
    ProcessGroup group;
    StatusOr<pid_t> spawned = group.Spawn({"sleep", "100"}, "sleep");
    ASSERT_TRUE(spawned.ok());
    pid = *spawned;
  }
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(ProcessGroupTest, ChildrenDieWithTheirLauncher) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t launcher = fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    // A stand-in launcher that dies without cleaning up.
    ProcessGroup group;
    StatusOr<pid_t> child = group.Spawn({"sleep", "100"}, "sleep");
    const pid_t pid = child.ok() ? *child : 0;
    (void)!write(pipe_fds[1], &pid, sizeof(pid));
    _exit(0);
  }
  close(pipe_fds[1]);
  pid_t orphan = 0;
  ASSERT_EQ(read(pipe_fds[0], &orphan, sizeof(orphan)),
            static_cast<ssize_t>(sizeof(orphan)));
  close(pipe_fds[0]);
  ASSERT_EQ(waitpid(launcher, nullptr, 0), launcher);
  ASSERT_GT(orphan, 0);
  EXPECT_TRUE(WaitUntilDead(orphan, milliseconds(5000)));
}

TEST_F(ProcessGroupTest, DescribesExits) {
  EXPECT_EQ(ExitInfo::FromWaitStatus(0).ToString(), "exited with status 0");
  EXPECT_TRUE(ExitInfo::FromWaitStatus(0).ok());
  ExitInfo killed;
  killed.signaled = true;
  killed.code = SIGKILL;
  EXPECT_FALSE(killed.ok());
  EXPECT_EQ(killed.ToString(), "was killed by signal 9 (SIGKILL)");
}

}  // namespace
}  // namespace lockstep
