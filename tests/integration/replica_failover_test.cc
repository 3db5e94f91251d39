// --replicas 1 with a real SIGKILL, under every policy: the killed
// server's shard is served by its backup on the other server, promoted
// with no rollback; the workers reroute and the job runs to its end with
// the same surviving processes.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/integration/recovery_job.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/param_names.h"

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
  EXPECT_EQ(StartedPid(cluster, "server 0"), survivor);
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "recoveries"), 0) << summary;
  EXPECT_EQ(JsonNumber(summary, "clocks"), 600) << summary;
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0.6) << summary;
}

INSTANTIATE_TEST_SUITE_P(Policies, ReplicaFailoverTest,
                         ::testing::Values("bsp", "ssp:2", "asp", "backup:1",
                                           "lbbsp"),
                         PolicyParamName());

}  // namespace
}  // namespace lockstep
