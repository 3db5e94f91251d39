// A worker whose device its machine lacks (a GPU worker on a host without
// one) is its own problem, not the job's, with real processes: the job
// starts and finishes with the other workers, and the worker says what to
// do; with no worker left the job ends saying so, and the launcher shows
// the coordinator's reason. The GPU is hidden (CUDA_VISIBLE_DEVICES=""),
// so a host with one, or a build without CUDA, sees the same.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "common/termination.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

using std::chrono::seconds;

class UnusableDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("CUDA_VISIBLE_DEVICES", "", 1); }
  void TearDown() override { unsetenv("CUDA_VISIBLE_DEVICES"); }

  // lockstep-launch of a small job with `device`.
  LauncherRun Launch(const std::string& device) {
    JobConfig job;
    job.servers = 1;
    job.workers = 2;
    job.model = "mlp:8";
    job.data = "synthetic:samples=800:test=200:dim=8:classes=3";
    job.max_clocks = 40;
    job.eval_every = 0;
    return RunLauncher(
        LaunchArgs(job, {"--run-dir", MakeTempDir("lockstep-device") + "/run",
                         "--device", device}));
  }
};

TEST_F(UnusableDeviceTest, TheJobStartsWithTheOtherWorkers) {
  const auto [exit, output] = Launch("w1:cuda;*:cpu");
  EXPECT_TRUE(exit.ok()) << output;
  EXPECT_NE(output.find("worker 1 (pid "), std::string::npos) << output;
  EXPECT_NE(output.find(") exited with status 4"), std::string::npos) << output;
  EXPECT_NE(output.find("cuda:0: no usable GPU"), std::string::npos) << output;
  EXPECT_NE(output.find("run this worker with --device cpu"), std::string::npos)
      << output;
  EXPECT_NE(output.find("the job goes on with the other workers"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("done: policy bsp  clocks 40"), std::string::npos)
      << output;
}

TEST_F(UnusableDeviceTest, WithNoWorkerLeftTheJobEndsNamingWhy) {
  const auto [exit, output] = Launch("cuda");
  EXPECT_EQ(exit.code, 1) << output;
  // The failing worker's lines are the ones shown, not a server's (told
  // the job failed, it is not the cause).
  EXPECT_NE(output.find("last lines of worker"), std::string::npos) << output;
  EXPECT_NE(output.find("no worker can run the job: every one's device is "
                        "unusable"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("last lines of server"), std::string::npos) << output;
}

// A role the coordinator told the job failed exits kExitJobAborted, so no
// one takes it for the cause.
TEST(JobAbortedTest, RolesToldTheJobFailedSaySoInTheirExit) {
  JobConfig job;
  job.servers = 1;
  job.workers = 1;
  job.model = "mlp:0";  // every worker refuses it: a width-0 layer
  job.data = "synthetic:samples=200:test=50:dim=8:classes=3";
  job.evaluators = 0;
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(job).ok());
  ASSERT_TRUE(cluster.StartServer(0).ok());
  // In the job before the worker fails it, or nobody tells it of the end.
  ASSERT_TRUE(
      cluster.AwaitPrinted("coordinator", "Server registered", seconds(30)))
      << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.StartWorker(0).ok());
  auto coordinator = cluster.WaitFor("coordinator", seconds(60));
  ASSERT_TRUE(coordinator.ok());
  EXPECT_EQ(coordinator->code, 1);
  EXPECT_TRUE(cluster.WaitAll(seconds(30)));
  EXPECT_EQ(cluster.ExitOf("server 0").code, kExitJobAborted)
      << cluster.Output("server 0");
  EXPECT_TRUE(cluster.Printed("server 0", "bad hidden layer width '0'"))
      << cluster.Output("server 0");
  EXPECT_EQ(cluster.ExitOf("worker 0").code, 1) << "its own failure";
}

}  // namespace
}  // namespace lockstep
