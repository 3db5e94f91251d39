// The out-of-band evaluator: no training worker evaluates; the evaluator
// reads the model at every evaluation point from the shards' images of
// that point, however far training has moved on, and then the final model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "tests/cluster/in_process_cluster.h"
#include "tests/support/param_names.h"

namespace lockstep {
namespace {

struct EvalPoint {
  int64_t clock = 0;
  std::string loss;  // as written: compared to the bit
  bool final = false;
};

JobConfig Job(const std::string& sync, int64_t clocks, int64_t eval_every) {
  JobConfig job;
  job.servers = 2;
  job.workers = 3;
  job.batches = {4, 8, 12};
  job.model = "mlp:16";
  job.data = "synthetic:samples=1200:test=4000:dim=16:classes=4";
  job.optimizer = "momentum";
  job.lr = 0.05;
  job.max_clocks = clocks;
  job.eval_every = eval_every;
  job.seed = 3;
  job.data_order = "global";
  job.heartbeat_ms = 500;
  job.sync = sync;
  return job;
}

std::vector<EvalPoint> RunAndReadEvaluations(const JobConfig& job) {
  InProcessJob spec;
  spec.job = job;
  // Clocks of 5-6 ms: an evaluation point every 25-30 ms, which the
  // evaluator (about 1 ms each) keeps up with, reading each point from the
  // shards' images while training goes on.
  spec.hetero.assign(job.workers, "linear=0.005+0.0001");
  spec.run_dir = std::filesystem::temp_directory_path() /
                 ("evaluator-" + std::to_string(getpid()));
  std::filesystem::remove_all(spec.run_dir);
  std::filesystem::create_directories(spec.run_dir);
  const InProcessResult result = RunInProcess(spec);
  EXPECT_TRUE(result.ok()) << result.Failures();
  std::vector<EvalPoint> evals;
  std::ifstream in(spec.run_dir + "/eval.jsonl");
  const std::regex re(
      R"re("clock":(\d+),.*"test_loss":([^,]+),.*"final":(true|false))re");
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, re)) {
      evals.push_back({std::stoll(m[1]), m[2], m[3] == "true"});
    }
  }
  in.close();
  std::filesystem::remove_all(spec.run_dir);
  return evals;
}

class EvaluatorTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EvaluatorTest, EveryPointIsEvaluatedAndTheLastIsTheFinalModel) {
  const auto evals = RunAndReadEvaluations(Job(GetParam(), 40, 5));
  ASSERT_EQ(evals.size(), 9u);  // 5, 10, ..., 40 and the final model
  for (size_t i = 0; i + 1 < evals.size(); ++i) {
    EXPECT_FALSE(evals[i].final);
    EXPECT_EQ(evals[i].clock, 5 * static_cast<int64_t>(i + 1));
  }
  EXPECT_TRUE(evals.back().final);
  // The image of point 40 is the model the job ended with.
  EXPECT_EQ(evals[7].loss, evals.back().loss);
}

INSTANTIATE_TEST_SUITE_P(Policies, EvaluatorTest,
                         ::testing::Values("bsp", "ssp:0", "asp", "lbbsp"),
                         PolicyParamName());

// BSP is deterministic: a job's evaluation at point 20, read while it went
// on to clock 60, must be exactly the final model of the same job stopped
// after 20 clocks.
TEST(EvaluatorExactnessTest, APointsEvaluationIsTheModelAfterThatManyClocks) {
  const auto longer = RunAndReadEvaluations(Job("bsp", 60, 10));
  const auto shorter = RunAndReadEvaluations(Job("bsp", 20, 0));
  std::map<int64_t, std::string> at;
  for (const EvalPoint& e : longer) {
    if (!e.final) at[e.clock] = e.loss;
  }
  ASSERT_EQ(at.size(), 6u);
  ASSERT_EQ(shorter.size(), 1u);
  EXPECT_TRUE(shorter[0].final);
  EXPECT_EQ(at[20], shorter[0].loss);
  EXPECT_NE(at[20], at[60]);  // training did move on
}

TEST(EvaluatorExactnessTest, WithoutAnEvaluatorOnlyTheFinalModelIsEvaluated) {
  JobConfig job = Job("bsp", 20, 5);
  job.evaluators = 0;
  const auto evals = RunAndReadEvaluations(job);
  ASSERT_EQ(evals.size(), 1u);
  EXPECT_TRUE(evals[0].final);
}

}  // namespace
}  // namespace lockstep
