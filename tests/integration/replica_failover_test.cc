// --replicas 1 with a real SIGKILL at a random moment: the killed
// server's shard is served by its backup on the other server, promoted
// with no rollback; the workers reroute and the job runs to its end with
// the same surviving processes, under every policy, and the launcher's
// replacement rebuilds the lost backups from live copies. Under
// BSP and LB-BSP the final model is the uninterrupted (unreplicated) job's,
// byte for byte; on arrival every push is applied exactly once on every shard.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <regex>

#include "common/coordinator_watch.h"
#include "tests/integration/recovery_job.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/param_names.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

class ReplicaFailoverTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReplicaFailoverTest, AKilledServersShardIsServedByItsBackup) {
  const std::string dir = MakeTempDir("lockstep-replicas") + "/run";
  TestCluster cluster;
  JobConfig job = SupervisedJobConfig();
  job.workers = 2;
  job.max_clocks = 600;
  job.replicas = 1;
  job.sync = GetParam();
  ASSERT_TRUE(cluster.Start(SupervisedJob(dir, job), "launch").ok());
  ASSERT_TRUE(PumpUntilARoundCompletes(cluster, dir, 60))
      << cluster.Output("launch");
  const pid_t survivor = StartedPid(cluster, "server 0");
  const pid_t server = StartedPid(cluster, "server 1");
  ASSERT_GT(server, 0) << cluster.Output("launch");
  ASSERT_EQ(kill(server, SIGKILL), 0);

  auto exit = cluster.WaitFor("launch", std::chrono::seconds(150));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("launch");
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  const std::string log = ReadFile(dir + "/logs/coordinator.log");
  EXPECT_NE(log.find("promoting shard 1's backup on server 0"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("workers rerouted, nothing rolled back"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("rolling every shard back"), std::string::npos) << log;
  // The launcher's replacement for server 1 rebuilds the backups from live
  // copies, and runs to the end with the job.
  EXPECT_NE(log.find("rebuilds 2 backups from live copies"), std::string::npos)
      << log;
  const std::string out = cluster.Output("launch");
  EXPECT_EQ(out.find("restart 2 of"), std::string::npos) << out;
  EXPECT_EQ(StartedPid(cluster, "server 0"), survivor);
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "recoveries"), 0) << summary;
  EXPECT_EQ(JsonNumber(summary, "clocks"), 600) << summary;
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0.6) << summary;
}

// Runs RecoveryJob (`sync`, one backup per shard, `uneven` as StartRoles)
// in `dir` and SIGKILLs server 1 at a random moment after its first
// snapshot round; returns the final model (empty on a failure).
std::vector<float> KillAPrimary(TestCluster& cluster, const std::string& dir,
                                const std::string& sync, bool uneven = false) {
  JobConfig job = RecoveryJob(dir, "global");
  job.sync = sync;
  job.replicas = 1;
  EXPECT_TRUE(cluster.StartCoordinator(job, {"--run-dir", dir}).ok());
  StartRoles(cluster, dir, uneven);
  EXPECT_TRUE(PumpUntilARoundCompletes(cluster, dir, 60))
      << cluster.Output("coordinator");
  const int delay_ms = std::uniform_int_distribution<int>(
      0, 400)(*std::make_unique<std::random_device>());
  std::cout << "killing server 1 " << delay_ms << " ms after a round\n";
  cluster.Pump(std::chrono::milliseconds(delay_ms));
  EXPECT_EQ(kill(cluster.Pid("server 1"), SIGKILL), 0);
  auto model = RunToTheEnd(cluster, dir);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  const std::string log = cluster.Output("coordinator");
  EXPECT_NE(log.find("promoting shard 1's backup on server 0"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("rolling every shard back"), std::string::npos) << log;
  // Which way the promoted backup got the clock in flight: the lost
  // primary's commit step, or its workers' pushes sent again.
  std::cout << (cluster.Printed("server 0", "holds the commit of clock")
                    ? "the commit in flight waited for pushes sent again\n"
                    : "no commit had to wait for pushes sent again\n");
  return model.ok() ? *model : std::vector<float>();
}

TEST(ReplicaFailoverBitsTest, BspEndsWithTheUninterruptedModel) {
  const std::vector<float> expected = UninterruptedModel("global");
  ASSERT_FALSE(expected.empty());
  TestCluster cluster;
  const std::vector<float> got =
      KillAPrimary(cluster, MakeTempDir("lockstep-replica-bsp"), "bsp");
  ExpectSameModel(got, expected);
}

// LB-BSP's quotas follow the workers' speeds, here emulated machines whose
// reported compute times and readings are the same in every run: the killed
// job hands out the quotas of the uninterrupted one clock by clock, and ends
// with its model, byte for byte.
TEST(ReplicaFailoverBitsTest, LbBspEndsWithTheUninterruptedModel) {
  std::string whole;
  const std::vector<float> expected =
      UninterruptedModel("global", "lbbsp", /*uneven=*/true, &whole);
  ASSERT_FALSE(expected.empty());
  const auto quotas = ReportedClocks(whole);
  ASSERT_EQ(quotas.size(), 3u);
  const int64_t last = kRecoveryClocks - 1;
  EXPECT_GT(quotas.at(0).at(last), quotas.at(2).at(last) + 8)
      << "the quotas learned the speeds";
  const std::string dir = MakeTempDir("lockstep-replica-lbbsp");
  TestCluster cluster;
  const std::vector<float> got =
      KillAPrimary(cluster, dir, "lbbsp", /*uneven=*/true);
  EXPECT_EQ(ReportedClocks(dir), quotas);
  ExpectSameModel(got, expected);
}

// The optimizer's step count of each shard a server's log names at the
// end (HostedShard::Totals), by shard.
std::map<int, int64_t> ShardSteps(const std::string& log) {
  std::map<int, int64_t> steps;
  const std::regex line(R"(shard (\d+) holds (\d+) optimizer steps)");
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end;
       ++it) {
    steps[std::stoi((*it)[1])] = std::stoll((*it)[2]);
  }
  return steps;
}

// On arrival (ASP, SSP) each push is one optimizer step of each shard:
// with a push lost the shards would hold fewer steps than the workers
// pushed, with a push applied twice more. Checks the totals `server_log`
// ends with against the job's summary in `dir`.
void ExpectEveryPushAppliedOnce(const std::string& dir,
                                const std::string& server_log) {
  const std::string summary = ReadFile(dir + "/summary.json");
  ASSERT_EQ(JsonNumber(summary, "dropped_pushes"), 0) << summary;
  int64_t pushed = 0;
  for (int w = 0; w < 3; ++w) {
    const double clocks =
        JsonNumber(summary, "lockstep_worker_clock{worker=\\\"" +
                                std::to_string(w) + "\\\"}");
    ASSERT_GT(clocks, 0) << summary;
    pushed += static_cast<int64_t>(clocks);
  }
  const std::map<int, int64_t> steps = ShardSteps(server_log);
  ASSERT_EQ(steps.size(), 2u) << server_log;
  EXPECT_EQ(steps.at(0), pushed);
  EXPECT_EQ(steps.at(1), pushed);
  std::cout << pushed << " pushes, each applied once on both shards\n";
}

class ReplicaExactlyOnceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReplicaExactlyOnceTest, EveryPushIsAppliedExactlyOnce) {
  const std::string dir = MakeTempDir("lockstep-replica-once");
  TestCluster cluster;
  ASSERT_FALSE(KillAPrimary(cluster, dir, GetParam()).empty());
  ExpectEveryPushAppliedOnce(dir, cluster.Output("server 0"));
}

// A replacement for the killed server holds backups copied live from the
// surviving server, which serves both shards; killed in turn, that server
// leaves both shards to the replacement's copies. BSP still ends with the
// uninterrupted job's model, byte for byte; on arrival every push is
// applied exactly once.
class ReplicaRebuildTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReplicaRebuildTest, AReplacementsLiveCopiesTakeOverWholeJob) {
  const auto job_in = [](const std::string& dir) {
    JobConfig job = RecoveryJob(dir, "global");
    job.max_clocks = 500;
    job.replicas = 1;
    job.sync = GetParam();
    return job;
  };
  const bool on_arrival = GetParam() != "bsp";
  std::vector<float> expected;
  if (!on_arrival) {
    const std::string dir = MakeTempDir("lockstep-replica-whole");
    TestCluster cluster;
    ASSERT_TRUE(cluster.StartCoordinator(job_in(dir), {"--run-dir", dir}).ok());
    StartRoles(cluster, dir);
    auto model = RunToTheEnd(cluster, dir);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    expected = *model;
  }
  const std::string dir = MakeTempDir("lockstep-replica-rebuild");
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(job_in(dir), {"--run-dir", dir}).ok());
  StartRoles(cluster, dir);
  ASSERT_TRUE(PumpUntilARoundCompletes(cluster, dir, 60));
  ASSERT_EQ(kill(cluster.Pid("server 1"), SIGKILL), 0);
  const auto pump_until = [&](const std::string& role,
                              const std::string& text) {
    for (int i = 0; i < 600 && !cluster.Printed(role, text); ++i) {
      cluster.Pump(std::chrono::milliseconds(50));
    }
    return cluster.Printed(role, text);
  };
  ASSERT_TRUE(pump_until("coordinator", "workers rerouted"))
      << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.StartServer(1).ok());
  // Both shards' new backups hold their copies (server 0 serves both).
  const auto installed = [&] {
    int n = 0;
    for (const std::string& line : cluster.Lines("server 0")) {
      n += line.find("holds the state at step") != std::string::npos;
    }
    return n;
  };
  for (int i = 0; i < 600 && installed() < 2; ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(installed(), 2)
      << cluster.Output("server 0") << cluster.Output("server 1");
  EXPECT_TRUE(cluster.Printed("coordinator", "rebuilds 2 backups"))
      << cluster.Output("coordinator");
  ASSERT_EQ(kill(cluster.Pid("server 0"), SIGKILL), 0);
  auto got = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(got.ok()) << got.status().ToString() << cluster.Output("server 1")
                        << cluster.Output("evaluator");
  const std::string log = cluster.Output("coordinator");
  EXPECT_EQ(log.find("rolling every shard back"), std::string::npos) << log;
  EXPECT_TRUE(
      cluster.Printed("server 1", "promoted: this server serves shard 0"))
      << cluster.Output("server 1");
  EXPECT_TRUE(
      cluster.Printed("server 1", "promoted: this server serves shard 1"))
      << cluster.Output("server 1");
  if (on_arrival) {
    ExpectEveryPushAppliedOnce(dir, cluster.Output("server 1"));
  } else {
    ExpectSameModel(*got, expected);
  }
}

// With two backups per shard, the one left after a promotion follows the
// new primary (from a live copy): when that primary is killed in turn, the
// shard is promoted once more, to it. 3 servers; BSP ends with the model of
// the same job run without replicas and without the kills, byte for byte.
TEST(ReplicaFailoverBitsTest, ABackupLeftAfterAPromotionFollowsTheNewPrimary) {
  const auto run = [](TestCluster& cluster, const std::string& dir,
                      uint32_t replicas) {
    JobConfig job = RecoveryJob(dir, "global");
    job.servers = 3;
    job.max_clocks = 500;
    job.replicas = replicas;
    EXPECT_TRUE(cluster.StartCoordinator(job, {"--run-dir", dir}).ok());
    for (int s = 0; s < 3; ++s) EXPECT_TRUE(cluster.StartServer(s).ok());
    StartWorkers(cluster, dir);
  };
  std::vector<float> expected;
  {
    const std::string dir = MakeTempDir("lockstep-replica-three");
    TestCluster cluster;
    run(cluster, dir, 0);
    auto model = RunToTheEnd(cluster, dir);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    expected = *model;
  }
  const std::string dir = MakeTempDir("lockstep-replica-two-backups");
  TestCluster cluster;
  run(cluster, dir, 2);
  ASSERT_TRUE(PumpUntilARoundCompletes(cluster, dir, 60));
  // Shard 1's backups are on servers 2 and 0: 2 is promoted, 0 follows it.
  ASSERT_EQ(kill(cluster.Pid("server 1"), SIGKILL), 0);
  const std::string copied = "holds a live copy of shard 1: a backup again";
  for (int i = 0; i < 600 && !cluster.Printed("coordinator", copied); ++i) {
    cluster.Pump(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(cluster.Printed("coordinator", copied))
      << cluster.Output("coordinator") << cluster.Output("server 0");
  ASSERT_EQ(kill(cluster.Pid("server 2"), SIGKILL), 0);
  auto got = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(got.ok()) << got.status().ToString() << cluster.Output("server 0")
                        << cluster.Output("worker 0")
                        << cluster.Output("worker 1")
                        << cluster.Output("worker 2");
  const std::string log = cluster.Output("coordinator");
  EXPECT_EQ(log.find("rolling every shard back"), std::string::npos) << log;
  for (const char* shard : {"1", "2"}) {
    EXPECT_TRUE(cluster.Printed(
        "server 0", std::string("promoted: this server serves shard ") + shard))
        << cluster.Output("server 0");
  }
  ExpectSameModel(*got, expected);
}

// A replicated job outlives its coordinator: the new one adopts the
// servers' commit (each server's backups take the adopted timeline with
// its primary), and a server killed after that is still promoted away
// from. BSP ends with the uninterrupted job's model, byte for byte.
TEST(ReplicaFailoverBitsTest, ACoordinatorFailoverThenAPrimaryLoss) {
  const std::vector<float> expected = UninterruptedModel("global");
  ASSERT_FALSE(expected.empty());
  const std::string dir = MakeTempDir("lockstep-replica-adopt");
  setenv(kReattachEnv, "60", 1);  // every role started here inherits it
  TestCluster cluster;
  JobConfig job = RecoveryJob(dir, "global");
  job.replicas = 1;
  ASSERT_TRUE(cluster.StartCoordinator(job, {"--run-dir", dir}).ok());
  StartRoles(cluster, dir);
  ASSERT_TRUE(PumpUntilARoundCompletes(cluster, dir, 60));
  ReplaceTheCoordinator(cluster, job, dir);
  for (int i = 0; i < 600 && !cluster.Printed("coordinator again",
                                              "adopting the live servers'");
       ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  unsetenv(kReattachEnv);
  ASSERT_TRUE(
      cluster.Printed("coordinator again", "adopting the live servers'"))
      << cluster.Output("coordinator again");
  cluster.Pump(std::chrono::milliseconds(100));
  ASSERT_EQ(kill(cluster.Pid("server 1"), SIGKILL), 0);
  auto exit = cluster.WaitFor("coordinator again", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok() && exit->ok())
      << cluster.Output("coordinator again") << cluster.Output("server 0")
      << cluster.Output("worker 1");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(30)));
  const std::string log = cluster.Output("coordinator again");
  EXPECT_NE(log.find("promoting shard 1's backup on server 0"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("rolling every shard back"), std::string::npos) << log;
  // A worker starting from the adopted layout may find server 1 gone: its
  // shard waits for the reroute rather than failing the worker.
  bool unreachable = false;
  for (int w = 0; w < 3; ++w) {
    unreachable |=
        cluster.Printed("worker " + std::to_string(w), "is unreachable");
  }
  std::cout << (unreachable ? "a worker found server 1 gone at its start\n"
                            : "the workers started before server 1 died\n");
  auto got = ReadModelFile(dir + "/model.bin");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectSameModel(*got, expected);
}

INSTANTIATE_TEST_SUITE_P(OnArrival, ReplicaExactlyOnceTest,
                         ::testing::Values("asp", "ssp:2"), PolicyParamName());

INSTANTIATE_TEST_SUITE_P(Policies, ReplicaRebuildTest,
                         ::testing::Values("bsp", "asp", "ssp:2"),
                         PolicyParamName());

INSTANTIATE_TEST_SUITE_P(Policies, ReplicaFailoverTest,
                         ::testing::Values("bsp", "ssp:2", "asp", "backup:1",
                                           "lbbsp"),
                         PolicyParamName());

}  // namespace
}  // namespace lockstep
