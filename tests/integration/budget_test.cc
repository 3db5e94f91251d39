// --budget-s with the real launcher and roles: a job whose clocks would
// take ~40 s ends after its 2.5 s of training, every worker is told so,
// and the final evaluation reads the model where training stopped, under
// the barrier policies (BSP, LB-BSP, backup workers) and an
// apply-on-arrival one (ASP).
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/test_cluster.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

// Each worker's clock costs 20 ms + 0.1 ms per sample: 21.6 ms at 16.
constexpr double kBudgetClockS = 0.0216;
constexpr int kBudgetJobClocks = 2000;  // ~43 s of clocks
constexpr double kTrainBudgetS = 2.5;

class BudgetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BudgetTest, AJobEndsOnceItsTrainingTimeBudgetIsSpent) {
  TempDir tmp("lockstep-budget");
  ASSERT_FALSE(tmp.path().empty());
  const std::string run_dir = tmp.path() + "/run";
  TestCluster cluster;
  JobConfig job;
  job.servers = 1;
  job.workers = 2;
  job.sync = GetParam();
  job.model = "softmax";
  job.data = "synthetic:samples=2048:dim=32";
  job.batches = {16};
  job.max_clocks = kBudgetJobClocks;
  job.eval_every = 25;
  job.budget_s = kTrainBudgetS;
  ASSERT_TRUE(cluster
                  .Start(LaunchCommand(
                             job, {"--hetero", "*:linear=0.02+0.0001",
                                   "--run-dir", run_dir, "--timeout-s", "90"}),
                         "launch")
                  .ok());
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok());
  ASSERT_TRUE(exit->ok()) << cluster.Output("launch");
  const std::string summary = ReadFile(run_dir + "/summary.json");
  const double train_s = JsonNumber(summary, "train_s");
  const double clocks = JsonNumber(summary, "clocks");
  // Stopped by time: at the budget (plus the clocks under way and a loaded
  // machine's slack), far short of what its clock count would take.
  EXPECT_GE(train_s, kTrainBudgetS) << summary;
  EXPECT_LT(train_s, kTrainBudgetS + 1.5) << summary;
  EXPECT_LT(train_s, kBudgetJobClocks * kBudgetClockS / 4) << summary;
  EXPECT_GT(clocks, 20) << summary;
  EXPECT_LT(clocks, kBudgetJobClocks) << summary;
  // The clocks it did fit in its training time.
  EXPECT_LE(clocks * kBudgetClockS, train_s) << summary;
  // The final evaluation is of the model where training stopped.
  const std::vector<std::string> evals = ReadLines(run_dir + "/eval.jsonl");
  ASSERT_FALSE(evals.empty());
  EXPECT_NE(evals.back().find("\"final\":true"), std::string::npos)
      << evals.back();
  EXPECT_EQ(JsonNumber(evals.back(), "clock"), clocks) << evals.back();
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0) << summary;
}

INSTANTIATE_TEST_SUITE_P(Policies, BudgetTest,
                         ::testing::Values("bsp", "asp", "lbbsp", "backup:1"));

}  // namespace
}  // namespace lockstep
