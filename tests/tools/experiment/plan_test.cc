#include "tools/experiment/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tools/experiment/estimate.h"

namespace lockstep {
namespace {

constexpr char kPlanSpec[] = R"(name = "plan"
seeds = [7, 8]
policies = ["bsp", { sync = "lbbsp:numerical", label = "num" }]

[job]
model = "mlp:8"
data = "synthetic:samples=1024:dim=16"
workers = 3
global_batch = 100
clocks = 50

[[scenario]]
name = "a"

[[scenario]]
name = "b"
hetero = "w2:x3"
job = { lr = 0.2 }
launch = { data_transport = "zmq-tcp" }

[launch]
data-transport = "tcp"
host = "127.0.0.1"
)";

StatusOr<std::vector<PlannedRun>> Plan(const std::string& text) {
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(text, "spec.toml");
  if (!spec.ok()) return spec.status();
  return PlanExperiment(*spec, "/out", "/bin/lockstep-launch");
}

// The value after `flag` in `argv`, or "" when it is absent.
std::string FlagValue(const std::vector<std::string>& argv,
                      const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

TEST(ExperimentPlanTest, OneRunPerScenarioPolicyAndSeedWithItsOwnFolder) {
  auto runs = Plan(kPlanSpec);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 8u);
  const PlannedRun& last = runs->back();
  EXPECT_EQ(last.scenario, "b");
  EXPECT_EQ(last.policy, "num");
  EXPECT_EQ(last.seed, 8u);
  EXPECT_EQ(last.dir, "/out/b/num/seed-8");
  EXPECT_EQ(last.argv.front(), "/bin/lockstep-launch");
  EXPECT_EQ(FlagValue(last.argv, "--sync"), "lbbsp:numerical");
  EXPECT_EQ(FlagValue(last.argv, "--seed"), "8");
  EXPECT_EQ(FlagValue(last.argv, "--lr"), "0.2");
  EXPECT_EQ(FlagValue(last.argv, "--hetero"), "w2:x3");
  // The scenario's launcher flags over the spec's.
  EXPECT_EQ(FlagValue(last.argv, "--data-transport"), "zmq-tcp");
  EXPECT_EQ(std::count(last.argv.begin(), last.argv.end(), "--data-transport"),
            1);
  EXPECT_EQ(FlagValue(last.argv, "--host"), "127.0.0.1");
  EXPECT_EQ(FlagValue(runs->front().argv, "--data-transport"), "tcp");
  EXPECT_EQ(FlagValue(last.argv, "--run-dir"), "/out/b/num/seed-8");
  // Every policy reads the same global order unless the spec says so.
  EXPECT_EQ(FlagValue(last.argv, "--data-order"), "global");
  EXPECT_EQ(FlagValue(runs->front().argv, "--hetero"), "");
  EXPECT_NE(FlagValue(runs->front().argv, "--lr"), "0.2");
  EXPECT_EQ(last.profiles.at(2), "x3");
  // The job as the launcher resolves it.
  EXPECT_EQ(last.job.max_clocks, 50);
  EXPECT_EQ(last.job.train_samples, 1024u);
}

TEST(ExperimentPlanTest, AGlobalBatchIsSplitAsEvenlyAsItGoes) {
  auto runs = Plan(kPlanSpec);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_EQ(runs->front().job.batches, (std::vector<uint32_t>{34, 33, 33}));
  EXPECT_EQ(FlagValue(runs->front().argv, "--batch"), "34,33,33");
  std::string both = kPlanSpec;
  both.insert(both.find("clocks"), "batch = 32\n");
  auto error = Plan(both);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find("batch or global_batch"),
            std::string::npos);
}

TEST(ExperimentPlanTest, ABadRunNamesTheFileLineScenarioAndPolicy) {
  std::string bad_value = kPlanSpec;
  bad_value.replace(bad_value.find("lr = 0.2"), 8, "lr = \"fast\"");
  auto error = Plan(bad_value);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find("spec.toml:18: "), std::string::npos)
      << error.status().message();
  EXPECT_NE(error.status().message().find("--lr"), std::string::npos)
      << error.status().message();

  std::string bad_rank = kPlanSpec;
  bad_rank.replace(bad_rank.find("w2:x3"), 5, "w5:x3");
  error = Plan(bad_rank);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find(
                "spec.toml: scenario 'b', policy 'bsp': --hetero"),
            std::string::npos)
      << error.status().message();

  std::string bad_params = kPlanSpec;
  bad_params.replace(bad_params.find("lbbsp:numerical"), 15, "lbbsp:sideways");
  error = Plan(bad_params);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find("scenario 'a', policy 'num'"),
            std::string::npos)
      << error.status().message();
}

TEST(ExperimentPlanTest,
     TheEstimateWaitsForTheStragglerUnlessThePolicyBalances) {
  std::string spec = kPlanSpec;
  spec.replace(spec.find("hetero = \"w2:x3\""), 16,
               "hetero = \"*:linear=0+0.001;w2:x3\"");
  auto runs = Plan(spec);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  const PlannedRun& bsp = (*runs)[4];  // scenario b, bsp, seed 7
  const PlannedRun& num = (*runs)[6];  // scenario b, lbbsp, seed 7
  ASSERT_EQ(bsp.policy, "bsp");
  ASSERT_EQ(num.policy, "num");
  // BSP waits for worker 2: 33 samples at 3 ms each per clock.
  EXPECT_NEAR(EstimateRunSeconds(bsp), kRunStartupS + 50 * 0.099, 1e-6);
  // A balanced split of 100 samples over speeds 1000, 1000 and 333/s ends
  // every worker at 100 / 2333 s (a sample more or less per worker).
  EXPECT_NEAR(EstimateRunSeconds(num), kRunStartupS + 50 * 100 / 2333.3,
              50 * 0.003);
  // Without profiles nothing is emulated: the start-up alone.
  EXPECT_NEAR(EstimateRunSeconds((*runs)[0]), kRunStartupS, 1e-9);
}

}  // namespace
}  // namespace lockstep
