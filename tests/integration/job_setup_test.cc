// Setting a job up with real processes: the coordinator knows no model or
// data set, so its workers describe both, and what they cannot build ends
// the job with their reason; servers wait silently (and are not declared
// dead) while workers load their data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

constexpr auto kSetupTimeout = std::chrono::seconds(60);

TEST(JobSetupTest, AModelTheWorkersCannotBuildEndsTheJobWithTheirReason) {
  TestCluster cluster;
  JobConfig job;
  job.servers = 1;
  job.workers = 2;
  job.model = "resnet:50";  // no such model
  job.data = "synthetic";
  job.max_clocks = 5;
  ASSERT_TRUE(cluster.StartCoordinator(job).ok());
  ASSERT_TRUE(cluster.StartServer(0).ok());
  for (int w = 0; w < 2; ++w) ASSERT_TRUE(cluster.StartWorker(w).ok());
  auto exit = cluster.WaitFor("coordinator", kSetupTimeout);
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_FALSE(exit->ok());
  const std::string log = cluster.Output("coordinator");
  EXPECT_THAT(log, HasSubstr("cannot join"));
  EXPECT_THAT(log, HasSubstr("unknown model 'resnet:50'"));
  EXPECT_THAT(log, HasSubstr("mlp:W1,W2,..."));  // the known ones
  // A server whose registration arrives after the coordinator gave up
  // hears nothing and exits after 30 s of silence (the coordinator might
  // have been still starting).
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(45)));
  EXPECT_FALSE(cluster.ExitOf("worker 0").ok());
  EXPECT_FALSE(cluster.ExitOf("server 0").ok());
}

// A server that registered with a coordinator which then died (or ended the
// job before the registration reached it) hears no shutdown: it notices the
// silence and exits, instead of waiting out its welcome timeout.
TEST(JobSetupTest, AServerWaitingForItsWelcomeExitsWhenTheCoordinatorDies) {
  TestCluster cluster;
  JobConfig job;
  job.servers = 1;
  job.workers = 1;
  job.model = "mlp:8";
  job.data = "synthetic";
  job.max_clocks = 5;
  ASSERT_TRUE(
      cluster.StartCoordinator(job, {}, /*start_evaluator=*/false).ok());
  const std::vector<pid_t> coordinator = cluster.group().running_pids();
  ASSERT_EQ(coordinator.size(), 1u);
  ASSERT_TRUE(cluster.StartServer(0).ok());
  for (int i = 0; i < 100 && !cluster.Printed("coordinator", "registered");
       ++i) {
    cluster.Pump(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(cluster.Printed("coordinator", "registered"))
      << cluster.Output("coordinator");
  // Its first heartbeat (after 1 s) is answered: from then on 10 s of
  // silence mean the coordinator is gone.
  for (int i = 0; i < 20; ++i) cluster.Pump(std::chrono::milliseconds(100));
  kill(coordinator[0], SIGKILL);
  auto exit = cluster.WaitFor("server 0", std::chrono::seconds(40));
  ASSERT_TRUE(exit.ok()) << cluster.Output("server 0");
  EXPECT_FALSE(exit->ok());
  EXPECT_TRUE(cluster.Printed("server 0", "went silent before welcoming"))
      << cluster.Output("server 0");
}

TEST(JobSetupTest, ServersWaitSilentlyWhileWorkersAreSlowToCome) {
  const std::string run_dir = MakeTempDir("lockstep-setup");
  TestCluster cluster;
  // 10 heartbeats of 50 ms: a server silent for 0.5 s after its Welcome
  // would be declared dead. It is welcomed only once the workers have
  // described the job, well after it registered.
  JobConfig job;
  job.servers = 2;
  job.workers = 2;
  job.model = "mlp:8";
  job.data = "synthetic:samples=512:dim=16";
  job.heartbeat_ms = 50;
  job.max_clocks = 40;
  ASSERT_TRUE(cluster.StartCoordinator(job, {"--run-dir", run_dir}).ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until) {
    cluster.Pump(std::chrono::milliseconds(100));
  }
  for (int w = 0; w < 2; ++w) ASSERT_TRUE(cluster.StartWorker(w).ok());
  auto exit = cluster.WaitFor("coordinator", kSetupTimeout);
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  const std::string summary = ReadFile(run_dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), 40) << summary;
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0.5) << summary;
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
}

}  // namespace
}  // namespace lockstep
