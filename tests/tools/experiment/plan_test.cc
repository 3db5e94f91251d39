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

namespace lockstep {
namespace {

constexpr char kSweepPlanSpec[] = R"(name = "sweep-plan"
seeds = [1, 2]
sweep = { lr = [0.05, 0.1], momentum = [0.5, 0.9] }
policies = [
  "bsp",
  { sync = "ssp:0", label = "ssp0", job = { lr = 0.2, optimizer = "sgd" } },
  { sync = "asp", sweep = { momentum = [0.0] } },
  { sync = "ssp:3", sweep = {} },
  { sync = "bsp", label = "static", batch = "proportional", sweep = {} },
]

[job]
model = "mlp:8"
data = "synthetic:samples=1024:dim=16"
workers = 3
global_batch = 100
clocks = 50
lr = 0.01
budget_s = 12.5

[[scenario]]
name = "slow"
hetero = "*:linear=0+0.001;w2:x3"
job = { lr = 0.03, momentum = 0.7, eval_every = 10 }
)";

StatusOr<std::vector<PlannedRun>> PlanText(const std::string& text) {
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(text, "spec.toml");
  if (!spec.ok()) return spec.status();
  return PlanExperiment(*spec, "/out", "/bin/lockstep-launch");
}

std::string ArgOf(const PlannedRun& run, const std::string& flag) {
  auto it = std::find(run.argv.begin(), run.argv.end(), flag);
  return it == run.argv.end() || it + 1 == run.argv.end() ? "" : *(it + 1);
}

// The runs of run group `group`, in seed order.
std::vector<PlannedRun> GroupRuns(const std::vector<PlannedRun>& runs,
                                  const std::string& group) {
  std::vector<PlannedRun> out;
  for (const PlannedRun& r : runs) {
    if (r.policy == group) out.push_back(r);
  }
  return out;
}

TEST(ExperimentPlanTest, EverySweepPointIsARunGroupWithItsOwnFolder) {
  auto runs = PlanText(kSweepPlanSpec);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  // bsp: 2 x 2 points; ssp0 fixes lr: 2; asp its own 1; ssp:3 and static
  // none: 9 groups of 2 seeds.
  EXPECT_EQ(runs->size(), 18u);
  std::vector<std::string> groups;
  for (const PlannedRun& r : *runs) {
    if (groups.empty() || groups.back() != r.policy) groups.push_back(r.policy);
  }
  EXPECT_EQ(groups, (std::vector<std::string>{
                        "bsp@lr=0.05,momentum=0.5", "bsp@lr=0.05,momentum=0.9",
                        "bsp@lr=0.1,momentum=0.5", "bsp@lr=0.1,momentum=0.9",
                        "ssp0@momentum=0.5", "ssp0@momentum=0.9",
                        "asp@momentum=0", "ssp:3", "static"}));
  const std::vector<PlannedRun> point =
      GroupRuns(*runs, "bsp@lr=0.1,momentum=0.5");
  ASSERT_EQ(point.size(), 2u);
  EXPECT_EQ(point[1].seed, 2u);
  EXPECT_EQ(point[1].policy_label, "bsp");
  EXPECT_EQ(point[1].sweep_point, "lr=0.1,momentum=0.5");
  ASSERT_EQ(point[1].sweep_settings.size(), 2u);
  EXPECT_EQ(point[1].sweep_settings[1].key, "momentum");
  EXPECT_EQ(point[1].sweep_settings[1].value, "0.5");
  EXPECT_EQ(point[1].dir, "/out/slow/bsp_lr_0.1_momentum_0.5/seed-2");
  EXPECT_EQ(ArgOf(point[1], "--run-dir"), point[1].dir);
  EXPECT_EQ(GroupRuns(*runs, "ssp:3").front().sweep_point, "");
  EXPECT_EQ(GroupRuns(*runs, "ssp:3").front().policy_label, "ssp:3");
  EXPECT_EQ(GroupRuns(*runs, "ssp:3").front().dir, "/out/slow/ssp_3/seed-1");
}

TEST(ExperimentPlanTest, JobThenScenarioThenPolicyThenSweepPoint) {
  auto runs = PlanText(kSweepPlanSpec);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  // The sweep point over the scenario's lr 0.03 and momentum 0.7.
  const PlannedRun bsp = GroupRuns(*runs, "bsp@lr=0.1,momentum=0.5").front();
  EXPECT_EQ(bsp.job.lr, 0.1);
  EXPECT_EQ(bsp.job.momentum, 0.5);
  EXPECT_EQ(ArgOf(bsp, "--lr"), "0.1");
  EXPECT_EQ(bsp.job.eval_every, 10);  // the scenario's
  EXPECT_EQ(bsp.job.budget_s, 12.5);  // [job]'s
  EXPECT_EQ(ArgOf(bsp, "--budget-s"), "12.5");
  // The policy's job over the scenario's; its lr out of the spec's sweep.
  const PlannedRun ssp0 = GroupRuns(*runs, "ssp0@momentum=0.9").front();
  EXPECT_EQ(ssp0.job.lr, 0.2);
  EXPECT_EQ(ssp0.job.momentum, 0.9);
  EXPECT_EQ(ssp0.job.optimizer, "sgd");
  EXPECT_EQ(ssp0.job.sync, "ssp:0");
  // Its own sweep instead of the spec's.
  const PlannedRun asp = GroupRuns(*runs, "asp@momentum=0").front();
  EXPECT_EQ(asp.job.lr, 0.03);
  EXPECT_EQ(asp.job.momentum, 0);
  // No sweep: the scenario's values.
  const PlannedRun ssp3 = GroupRuns(*runs, "ssp:3").front();
  EXPECT_EQ(ssp3.job.lr, 0.03);
  EXPECT_EQ(ssp3.job.momentum, 0.7);
  EXPECT_EQ(ssp3.job.batches, (std::vector<uint32_t>{34, 33, 33}));
}

// The smallest slowest-worker time of any split of `x` samples (each >= 1)
// over workers costing `per_sample` seconds a sample, by brute force.
double BestSlowest(const std::vector<double>& per_sample, int x) {
  double best = INFINITY;
  for (int a = 1; a < x; ++a) {
    for (int b = 1; a + b < x; ++b) {
      const int c = x - a - b;
      best = std::min(best, std::max({a * per_sample[0], b * per_sample[1],
                                      c * per_sample[2]}));
    }
  }
  return best;
}

TEST(ExperimentPlanTest, AProportionalSplitFinishesEveryWorkerTogether) {
  auto runs = PlanText(kSweepPlanSpec);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  const PlannedRun split = GroupRuns(*runs, "static").front();
  ASSERT_EQ(split.job.batches.size(), 3u);
  const std::vector<double> per_sample = {0.001, 0.001, 0.003};
  double slowest = 0;
  uint32_t sum = 0;
  for (size_t w = 0; w < 3; ++w) {
    slowest = std::max(slowest, split.job.batches[w] * per_sample[w]);
    sum += split.job.batches[w];
  }
  EXPECT_EQ(sum, 100u);
  EXPECT_NEAR(slowest, BestSlowest(per_sample, 100), 1e-12);
  EXPECT_GT(split.job.batches[0], 2 * split.job.batches[2]);
  EXPECT_EQ(split.job.sync, "bsp");
  EXPECT_EQ(ArgOf(split, "--batch"),
            std::to_string(split.job.batches[0]) + "," +
                std::to_string(split.job.batches[1]) + "," +
                std::to_string(split.job.batches[2]));
  // Without profiles every worker is alike: an even split.
  std::string uniform = kSweepPlanSpec;
  uniform.replace(uniform.find("hetero = "), 34, "");
  auto even = PlanText(uniform);
  ASSERT_TRUE(even.ok()) << even.status().message();
  EXPECT_EQ(GroupRuns(*even, "static").front().job.batches,
            (std::vector<uint32_t>{34, 33, 33}));
  // A worker without a cost model cannot be sized against the others.
  std::string partial = kSweepPlanSpec;
  partial.replace(partial.find("*:linear=0+0.001;w2:x3"), 22,
                  "w0:linear=0+0.001;w2:x3");
  auto error = PlanText(partial);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find(
                "scenario 'slow', policy 'static': batch = \"proportional\" "
                "needs a cost model"),
            std::string::npos)
      << error.status().message();
}

TEST(ExperimentPlanTest, ALaterLayersBatchReplacesAnEarlierGlobalBatch) {
  std::string text = kSweepPlanSpec;
  text.replace(text.find("eval_every = 10 }"), 17,
               "eval_every = 10, batch = [10, 20, 30] }");
  auto runs = PlanText(text);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_EQ(GroupRuns(*runs, "ssp:3").front().job.batches,
            (std::vector<uint32_t>{10, 20, 30}));
  text.replace(text.find("optimizer = \"sgd\""), 17,
               "optimizer = \"sgd\", global_batch = 61");
  runs = PlanText(text);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_EQ(GroupRuns(*runs, "ssp0@momentum=0.5").front().job.batches,
            (std::vector<uint32_t>{21, 20, 20}));
}

TEST(ExperimentPlanTest, RunGroupsWhoseFoldersCollideAreRefused) {
  std::string text = kSweepPlanSpec;
  text.replace(text.find("label = \"static\""), 16, "label = \"ssp_3\"");
  auto error = PlanText(text);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find(
                "policies 'ssp:3' and 'ssp_3' would share the folder ssp_3"),
            std::string::npos)
      << error.status().message();
}

TEST(ExperimentPlanTest, TheEstimateStopsAtTheTimeBudget) {
  std::string text = kSweepPlanSpec;
  text.replace(text.find("clocks = 50"), 11, "clocks = 5000");
  auto runs = PlanText(text);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  // 5000 clocks of at least 33 ms: far beyond the 12.5 s budget.
  EXPECT_NEAR(EstimateRunSeconds(GroupRuns(*runs, "ssp:3").front()),
              kRunStartupS + 12.5, 1e-9);
  text.replace(text.find("budget_s = 12.5"), 15, "budget_s = 0");
  runs = PlanText(text);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_GT(EstimateRunSeconds(GroupRuns(*runs, "ssp:3").front()),
            5000 * 0.033);
}

}  // namespace
}  // namespace lockstep
