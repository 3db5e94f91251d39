// --max-grad-norm with the real launcher and roles: at a bound below every
// gradient's norm, "reject" refuses every push on every shard (counted,
// nothing trained; with --max-refused-pushes 0 nobody is removed), while
// "clip" scales each push down to the bound and the job trains.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/test_cluster.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

constexpr int kNormJobClocks = 60;

// The summary of a 2-shard, 2-worker softmax job with `action` at a bound
// of 0.05.
std::string RunWithBound(const std::string& action) {
  TempDir tmp("lockstep-grad-norm");
  const std::string run_dir = tmp.path() + "/run";
  TestCluster cluster;
  JobConfig job;
  job.servers = 2;
  job.workers = 2;
  job.model = "softmax";
  job.data = "synthetic:samples=2048:dim=32";
  job.batches = {16};
  job.optimizer = "sgd";
  job.lr = 0.5;
  job.max_clocks = kNormJobClocks;
  job.eval_every = 0;
  job.max_grad_norm = 0.05;
  job.grad_norm_action = action;
  job.max_refused_pushes = 0;
  EXPECT_TRUE(cluster
                  .Start(LaunchCommand(
                             job, {"--run-dir", run_dir, "--timeout-s", "90"}),
                         "launch")
                  .ok());
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(120));
  EXPECT_TRUE(exit.ok() && exit->ok()) << cluster.Output("launch");
  return ReadFile(run_dir + "/summary.json");
}

TEST(GradNormTest, RejectRefusesEveryPushAboveTheBoundAndClipTrains) {
  const std::string rejected = RunWithBound("reject");
  const std::string clipped = RunWithBound("clip");
  // Every push of both workers on both shards, every clock.
  EXPECT_EQ(JsonNumber(rejected, "rejected_pushes"), kNormJobClocks * 2 * 2)
      << rejected;
  EXPECT_EQ(JsonNumber(rejected, "poisoning_workers_removed"), 0) << rejected;
  EXPECT_EQ(JsonNumber(rejected, "clocks"), kNormJobClocks) << rejected;
  EXPECT_EQ(JsonNumber(clipped, "rejected_pushes"), 0) << clipped;
  std::cout << "test accuracy: every push refused "
            << JsonNumber(rejected, "test_accuracy") << ", clipped "
            << JsonNumber(clipped, "test_accuracy") << "\n";
  // Nothing trained against clipped steps that did: the untouched model is
  // at chance among the synthetic classes.
  EXPECT_GT(JsonNumber(clipped, "test_accuracy"),
            JsonNumber(rejected, "test_accuracy") + 0.1)
      << rejected << "\n"
      << clipped;
}

}  // namespace
}  // namespace lockstep
