// No refusal is silent, with real processes: a worker holding another
// job's key, or pointed where no coordinator listens, is told within
// seconds and says what to check; the coordinator logs and counts the
// handshake it refused; lockstep-snapshot now with a foreign key ends at
// once; and a job whose start waits for a role nobody started (the
// evaluator, above all) names it while it waits and when it gives up.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>

#include "tests/integration/test_cluster.h"
#include "tests/support/job_key_files.h"

namespace lockstep {
namespace {

using std::chrono::seconds;

JobConfig OneWorkerJob() {
  JobConfig job;
  job.servers = 1;
  job.workers = 1;
  job.model = "softmax";
  job.data = "synthetic:samples=400:test=100:dim=8:classes=3";
  job.max_clocks = 20;
  job.eval_every = 0;
  return job;
}

TEST(RefusalTest, AWorkerHoldingAnotherJobsKeyIsToldWithinSeconds) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(OneWorkerJob(), {}, false).ok());
  const std::string other = NewJobKeysDir() + "/worker.key";
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(cluster.StartWorker(0, {"--keys", other}).ok());
  auto exit = cluster.WaitFor("worker 0", seconds(30));
  ASSERT_TRUE(exit.ok()) << cluster.Output("worker 0");
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(15));
  EXPECT_FALSE(exit->ok());
  const std::string said = cluster.Output("worker 0");
  EXPECT_NE(said.find("the coordinator at " + cluster.endpoint() +
                      " refused this process"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("--keys"), std::string::npos) << said;
  EXPECT_TRUE(
      cluster.AwaitPrinted("coordinator", "refused a connection", seconds(5)))
      << cluster.Output("coordinator");
  const std::string metrics = cluster.CoordinatorMetrics();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      metrics, m,
      std::regex(R"(lockstep_refused_connections_total\{plane="control"\} )"
                 R"(([0-9]+))")))
      << metrics;
  EXPECT_GE(std::stoi(m[1]), 1) << metrics;
}

TEST(RefusalTest, AWorkerWhereNoCoordinatorListensSaysSoAndWaits) {
  TestCluster cluster;
  // Port 9 (discard): nothing listens, and no connect can meet itself
  // there (loopback source ports are ephemeral).
  ASSERT_TRUE(cluster
                  .Start({BinaryPath("lockstep-worker"), "--coordinator",
                          "tcp://127.0.0.1:9", "--keys",
                          cluster.keys_dir() + "/worker.key"},
                         "worker")
                  .ok());
  EXPECT_TRUE(cluster.AwaitPrinted(
      "worker", "nothing answers at tcp://127.0.0.1:9", seconds(10)))
      << cluster.Output("worker");
  EXPECT_TRUE(cluster.Printed("worker", "--coordinator"));
  EXPECT_FALSE(cluster.Exited("worker")) << "the coordinator may be starting";
}

TEST(RefusalTest, ASnapshotRequestWithAForeignKeyEndsAtOnce) {
  const std::string dir = MakeTempDir("lockstep-refused-now");
  JobConfig job = OneWorkerJob();
  job.snapshot_dir = dir + "/snapshots";
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(job, {"--run-dir", dir}, false).ok());
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(cluster
                  .Start({BinaryPath("lockstep-snapshot"), "now", dir, "--keys",
                          NewJobKeysDir() + "/admin.key"},
                         "now")
                  .ok());
  auto exit = cluster.WaitFor("now", seconds(60));
  ASSERT_TRUE(exit.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(15));
  EXPECT_FALSE(exit->ok());
  EXPECT_TRUE(cluster.Printed("now", "refused this process"))
      << cluster.Output("now");
}

TEST(RefusalTest, TheStartNamesTheForgottenEvaluator) {
  JobConfig job = OneWorkerJob();
  job.evaluators = 1;
  TestCluster cluster;
  ASSERT_TRUE(cluster
                  .StartCoordinator(job, {"--register-timeout-s", "14"},
                                    /*start_evaluator=*/false)
                  .ok());
  ASSERT_TRUE(cluster.StartServer(0).ok());
  ASSERT_TRUE(cluster.StartWorker(0).ok());
  // Said while it waits, long before the deadline...
  EXPECT_TRUE(cluster.AwaitPrinted("coordinator",
                                   "waiting for the evaluator (lockstep-worker "
                                   "--evaluator; or start the coordinator with "
                                   "--evaluators 0) to register",
                                   seconds(13)))
      << cluster.Output("coordinator");
  // ... and when it gives up.
  auto exit = cluster.WaitFor("coordinator", seconds(30));
  ASSERT_TRUE(exit.ok());
  EXPECT_FALSE(exit->ok());
  EXPECT_TRUE(
      cluster.Printed("coordinator", "it was still waiting for the evaluator"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(seconds(30)));
}

}  // namespace
}  // namespace lockstep
