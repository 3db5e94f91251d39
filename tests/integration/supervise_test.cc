// lockstep-launch --supervise with real SIGKILLs, under every policy: a
// server killed mid-training is started again by the launcher, every shard
// rolls back to the newest complete snapshot round and the job still
// learns; a worker killed afterwards is started again and rejoins. A killed
// coordinator is started again alone: the live roles re-attach to it and
// the job resumes from its newest round.
#include <gtest/gtest.h>
#include <signal.h>

#include <iostream>

#include "tests/integration/recovery_job.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/param_names.h"

namespace lockstep {
namespace {

// Pumps until `done` holds (true) or about `seconds` passed (false).
template <typename Done>
bool PumpUntil(TestCluster& cluster, int seconds, Done done) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (done()) return true;
    cluster.Pump(std::chrono::milliseconds(50));
  }
  return done();
}

class SuperviseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SuperviseTest, KilledServerAndWorkerAreRestartedAndTheJobLearns) {
  const std::string dir = MakeTempDir("lockstep-supervise") + "/run";
  TestCluster cluster;
  JobConfig job = SupervisedJobConfig();
  job.workers = 3;
  job.max_clocks = 600;
  job.sync = GetParam();
  const std::vector<std::string> argv = SupervisedJob(dir, job);
  ASSERT_TRUE(cluster.Start(argv, "launch").ok());
  ASSERT_TRUE(PumpUntilARoundCompletes(cluster, dir, 60))
      << cluster.Output("launch");
  const pid_t server = StartedPid(cluster, "server 1");
  ASSERT_GT(server, 0) << cluster.Output("launch");
  ASSERT_EQ(kill(server, SIGKILL), 0);

  // The launcher starts it again; the coordinator rolls the job back.
  const std::string log = dir + "/logs/coordinator.log";
  ASSERT_TRUE(PumpUntil(cluster, 60, [&] {
    return ReadFile(log).find("recovered in") != std::string::npos;
  })) << ReadFile(log);
  const pid_t worker = StartedPid(cluster, "worker 2");
  ASSERT_GT(worker, 0);
  ASSERT_EQ(kill(worker, SIGKILL), 0);

  auto exit = cluster.WaitFor("launch", std::chrono::seconds(150));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("launch");
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  const std::string out = cluster.Output("launch");
  EXPECT_NE(out.find("server 1 (pid " + std::to_string(server) +
                     ") was killed by signal 9 (SIGKILL); restarting it"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("worker 2 (pid " + std::to_string(worker) +
                     ") was killed by signal 9 (SIGKILL); restarting it"),
            std::string::npos)
      << out;
  EXPECT_NE(StartedPid(cluster, "worker 2"), worker) << out;
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_GE(JsonNumber(summary, "recoveries"), 1) << summary;
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0.6) << summary;
  // Back at once: registering for its rank replaces the dead process.
  EXPECT_NE(ReadFile(log).find("worker 2 removed: replaced by a new worker"),
            std::string::npos);
  EXPECT_EQ(out.find("restart 2 of"), std::string::npos) << out;
}

// The coordinator SIGKILLed under --supervise: the launcher starts it
// again at the same endpoint, and the servers and workers, which stayed up,
// register again. The new coordinator adopts the servers' newest commit
// under commit policies (nothing computed again) and resumes from the
// newest complete round under on-arrival ones. No other process restarts.
class SuperviseCoordinatorTest : public ::testing::TestWithParam<std::string> {
};

TEST_P(SuperviseCoordinatorTest, AKilledCoordinatorTakesTheLiveRolesBack) {
  const std::string dir = MakeTempDir("lockstep-supervise-c") + "/run";
  TestCluster cluster;
  JobConfig job = SupervisedJobConfig();
  job.workers = 2;
  job.max_clocks = 400;
  job.sync = GetParam();
  const std::vector<std::string> argv = SupervisedJob(dir, job);
  ASSERT_TRUE(cluster.Start(argv, "launch").ok());
  const std::optional<uint64_t> round =
      PumpUntilARoundCompletes(cluster, dir, 60);
  ASSERT_TRUE(round.has_value()) << cluster.Output("launch");
  const std::vector<std::string> others = {"server 0", "server 1", "worker 0",
                                           "worker 1", "evaluator"};
  std::vector<pid_t> pids;
  for (const std::string& role : others) {
    pids.push_back(StartedPid(cluster, role));
    ASSERT_GT(pids.back(), 0) << role << "\n" << cluster.Output("launch");
  }
  const pid_t coordinator = StartedPid(cluster, "coordinator");
  ASSERT_GT(coordinator, 0);
  ASSERT_EQ(kill(coordinator, SIGKILL), 0);

  auto exit = cluster.WaitFor("launch", std::chrono::seconds(150));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("launch");
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  const std::string out = cluster.Output("launch");
  EXPECT_NE(out.find("restarting the coordinator, which takes the other "
                     "roles back and resumes the job from snapshot round"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("stopping every role"), std::string::npos) << out;
  EXPECT_NE(StartedPid(cluster, "coordinator"), coordinator) << out;
  for (size_t i = 0; i < others.size(); ++i) {
    EXPECT_EQ(StartedPid(cluster, others[i]), pids[i])
        << others[i] << " was started again\n"
        << out;
  }
  const std::string log = ReadFile(dir + "/logs/coordinator.log");
  const std::string server = ReadFile(dir + "/logs/server-1.log");
  EXPECT_NE(server.find("re-attached"), std::string::npos) << server;
  const bool on_arrival = GetParam() == "ssp:2" || GetParam() == "asp";
  // Under commit policies the shards hold the newest commit, which is
  // kept (nothing computed again), unless the kill fell between the
  // shards' commits of one clock; on arrival a shard's state is a cut of
  // its own. Either way a path that holds together.
  const bool adopted = log.find("adopting the live servers' state at clock") !=
                       std::string::npos;
  EXPECT_FALSE(on_arrival && adopted) << log;
  std::cout << GetParam() << ": "
            << (adopted ? "adopted the servers' commit"
                        : "resumed from the round")
            << "\n";
  if (adopted) {
    EXPECT_NE(server.find("the resumed coordinator adopted it"),
              std::string::npos)
        << server;
    EXPECT_EQ(server.find("rolling back"), std::string::npos) << server;
  } else {
    EXPECT_NE(log.find("resuming from snapshot round"), std::string::npos)
        << log;
    EXPECT_NE(server.find("rolling back to snapshot round"), std::string::npos)
        << server;
  }
  EXPECT_NE(ReadFile(dir + "/logs/worker-0.log").find("re-attached"),
            std::string::npos);
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), 400) << summary;
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0.6) << summary;
  EXPECT_GE(*round, 1u);
}

INSTANTIATE_TEST_SUITE_P(Policies, SuperviseCoordinatorTest,
                         ::testing::Values("bsp", "ssp:2", "asp", "backup:1",
                                           "lbbsp"),
                         PolicyParamName());

INSTANTIATE_TEST_SUITE_P(Policies, SuperviseTest,
                         ::testing::Values("bsp", "ssp:2", "asp", "backup:1",
                                           "lbbsp"),
                         PolicyParamName());

}  // namespace
}  // namespace lockstep
