// Liveness both ways: a worker blocked in long work for many heartbeat
// intervals is not declared dead (its heartbeats come from a thread of
// their own); a coordinator that dies makes every server and worker exit
// with an error instead of waiting forever.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

JobConfig Job(int clocks) {
  JobConfig job;
  job.servers = 1;
  job.workers = 2;
  job.model = "softmax";
  job.batches = {16};
  job.max_clocks = clocks;
  job.train_limit = 2000;
  job.test_limit = 500;
  job.eval_every = 0;
  // Short, so a busy worker spans many intervals.
  job.heartbeat_ms = 100;
  return job;
}

TEST(LivenessTest, WorkerBusyForManyHeartbeatIntervalsIsNotDeclaredDead) {
  const std::string dir = MakeTempDir("lockstep-busy");
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(Job(3), {"--run-dir", dir}).ok());
  ASSERT_TRUE(cluster.StartServer(0).ok());
  ASSERT_TRUE(cluster.StartWorker(0).ok());
  // Each clock of worker 1 blocks for 1.5 s: 15 heartbeat intervals, more
  // than the 10 after which a silent worker is removed.
  ASSERT_TRUE(cluster.StartWorker(1, {"--hetero", "linear=1.5+0.0001"}).ok());
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(60));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "dead_workers"), 0) << summary;
  EXPECT_EQ(JsonNumber(summary, "clocks"), 3) << summary;
  EXPECT_TRUE(cluster.ExitOf("worker 1").ok()) << cluster.Output("worker 1");
}

// Starts a long job (a server, two workers, each role given `flags`),
// lets it run 50 clocks and SIGKILLs its coordinator.
void KillTheCoordinatorOfARunningJob(TestCluster& cluster,
                                     const std::string& dir,
                                     const std::vector<std::string>& flags) {
  ASSERT_TRUE(cluster.StartCoordinator(Job(1000000), {"--run-dir", dir}).ok());
  ASSERT_TRUE(cluster.StartServer(0, flags).ok());
  ASSERT_TRUE(cluster.StartWorker(0, flags).ok());
  ASSERT_TRUE(cluster.StartWorker(1, flags).ok());
  for (int i = 0; i < 200 && ReadLines(dir + "/metrics.jsonl").size() < 50;
       ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  const pid_t coordinator = RunningPidOf(cluster, "lockstep-coordinator");
  ASSERT_NE(coordinator, 0);
  ASSERT_EQ(kill(coordinator, SIGKILL), 0);
}

TEST(LivenessTest, DeadCoordinatorEndsEveryRole) {
  const std::string dir = MakeTempDir("lockstep-nocoord");
  TestCluster cluster;
  KillTheCoordinatorOfARunningJob(cluster, dir, {});
  // 10 intervals of 100 ms, plus slack for a loaded machine.
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(30)))
      << "roles kept waiting for a dead coordinator";
  for (const std::string name : {"server 0", "worker 0", "worker 1"}) {
    EXPECT_FALSE(cluster.ExitOf(name).ok()) << name;
    EXPECT_NE(cluster.Output(name).find("silent"), std::string::npos)
        << name << ": " << cluster.Output(name);
  }
}

// With a re-attach window the roles outlive the coordinator, register
// again, and end only when no coordinator took them back within it.
TEST(LivenessTest, RolesWaitTheirReattachWindowForADeadCoordinator) {
  const std::string dir = MakeTempDir("lockstep-nocoord-window");
  TestCluster cluster;
  KillTheCoordinatorOfARunningJob(cluster, dir, {"--reattach-s", "3"});
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(40)))
      << "roles kept waiting past their window";
  for (const std::string name : {"server 0", "worker 0", "worker 1"}) {
    EXPECT_FALSE(cluster.ExitOf(name).ok()) << name;
    const std::string out = cluster.Output(name);
    EXPECT_NE(out.find("registering again, waiting up to 3 s"),
              std::string::npos)
        << name << ": " << out;
    EXPECT_NE(out.find("did not take this role back within 3 s"),
              std::string::npos)
        << name << ": " << out;
  }
}

// A coordinator paused (SIGSTOP) past the silence limit is not lost: the
// roles open their window, hear from the same coordinator again when it
// continues, and the job finishes with every role it had.
TEST(LivenessTest, APausedCoordinatorKeepsItsRolesWithAWindow) {
  const std::string dir = MakeTempDir("lockstep-paused-coord");
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(Job(20000), {"--run-dir", dir}).ok());
  const std::vector<std::string> window = {"--reattach-s", "30"};
  ASSERT_TRUE(cluster.StartServer(0, window).ok());
  ASSERT_TRUE(cluster.StartWorker(0, window).ok());
  ASSERT_TRUE(cluster.StartWorker(1, window).ok());
  for (int i = 0; i < 200 && !cluster.Printed("server 0", "serves dense keys");
       ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  cluster.Pump(std::chrono::milliseconds(500));  // training
  const pid_t coordinator = RunningPidOf(cluster, "lockstep-coordinator");
  ASSERT_NE(coordinator, 0);
  ASSERT_EQ(kill(coordinator, SIGSTOP), 0);
  // 2.5 s: 25 heartbeat intervals, far past the limit of 10.
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
  while (std::chrono::steady_clock::now() < until) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(kill(coordinator, SIGCONT), 0);
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  for (const std::string name : {"server 0", "worker 0", "worker 1"}) {
    EXPECT_TRUE(cluster.ExitOf(name).ok()) << name << cluster.Output(name);
    EXPECT_TRUE(cluster.Printed(name, "registering again"))
        << name << ": " << cluster.Output(name);
    EXPECT_TRUE(cluster.Printed(name, "still knows this role"))
        << name << ": " << cluster.Output(name);
  }
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), 20000) << summary;
  EXPECT_EQ(JsonNumber(summary, "dead_workers"), 0) << summary;
  EXPECT_EQ(JsonNumber(summary, "recoveries"), 0) << summary;
}

}  // namespace
}  // namespace lockstep
