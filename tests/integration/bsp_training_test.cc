// 1 coordinator + 2 shards + 3 workers train on Fashion-MNIST under BSP as
// real processes on 127.0.0.1; the loss must fall and every role must exit
// cleanly when the job ends.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

constexpr auto kTimeout = std::chrono::seconds(180);

double MeanLoss(const std::vector<std::string>& metrics, int64_t first,
                int64_t last) {
  double sum = 0;
  int n = 0;
  for (const auto& line : metrics) {
    const double clock = JsonNumber(line, "clock");
    if (clock >= first && clock <= last) {
      sum += JsonNumber(line, "loss");
      ++n;
    }
  }
  return n > 0 ? sum / n : NAN;
}

TEST(BspTrainingTest, ThreeWorkersTwoShardsLossFallsAndAllExit) {
  const std::string run_dir = MakeTempDir("lockstep-bsp");
  TestCluster cluster;
  JobConfig job;
  job.servers = 2;
  job.workers = 3;
  job.model = "mlp:32";
  job.batches = {16};
  job.max_clocks = 300;
  job.train_limit = 6000;
  job.test_limit = 2000;
  job.eval_every = 100;
  job.lr = 0.05;
  ASSERT_TRUE(cluster.StartCoordinator(job, {"--run-dir", run_dir}).ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  for (int w = 0; w < 3; ++w) ASSERT_TRUE(cluster.StartWorker(w).ok());

  auto exit = cluster.WaitFor("coordinator", kTimeout);
  ASSERT_TRUE(exit.ok()) << exit.status().ToString()
                         << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  for (const std::string name :
       {"server 0", "server 1", "worker 0", "worker 1", "worker 2"}) {
    EXPECT_TRUE(cluster.ExitOf(name).ok())
        << name << ": " << cluster.ExitOf(name).ToString() << "\n"
        << cluster.Output(name);
  }

  const auto metrics = ReadLines(run_dir + "/metrics.jsonl");
  ASSERT_EQ(metrics.size(), 300u * 3u);
  const double early = MeanLoss(metrics, 0, 19);
  const double late = MeanLoss(metrics, 280, 299);
  EXPECT_LT(late, early * 0.6) << "early " << early << " late " << late;

  const std::string summary = ReadFile(run_dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), 300);
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0.7) << summary;
  EXPECT_EQ(JsonNumber(summary, "bad_messages"), 0) << summary;
  // The evaluator's points 100, 200, 300, and the final model (which is
  // point 300's: the same accuracy).
  const auto evals = ReadLines(run_dir + "/eval.jsonl");
  ASSERT_EQ(evals.size(), 4u);
  EXPECT_EQ(JsonNumber(evals[2], "clock"), 300);
  EXPECT_EQ(JsonNumber(evals[2], "test_accuracy"),
            JsonNumber(evals[3], "test_accuracy"));
}

}  // namespace
}  // namespace lockstep
