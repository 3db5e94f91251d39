// Same stopping rule for every policy: apply-on-arrival jobs (SSP, ASP)
// end when their workers have processed max_clocks x X samples between
// them, like max_clocks clocks of BSP, not when the slowest worker has run
// max_clocks clocks of its own; and they are evaluated at the same points
// of global progress, with evaluation time left out of training time.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "tests/cluster/in_process_cluster.h"
#include "tests/support/param_names.h"

namespace lockstep {
namespace {

constexpr int kBudgetClocks = 40;

struct WorkerClocks {
  uint64_t samples = 0;              // over every reported clock
  std::map<uint32_t, int64_t> last;  // newest clock, by worker
};

struct Evaluation {
  int64_t clock;
  double wall_s, loss;
  bool final;
};

std::vector<Evaluation> ReadEvaluations(const std::string& path) {
  std::ifstream in(path);
  const std::regex line_re(
      R"re("clock":(\d+),"wall_s":([0-9.e-]+),.*"test_loss":([0-9.e-]+).*"final":(true|false))re");
  std::vector<Evaluation> out;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, line_re)) continue;
    out.push_back(
        {std::stoll(m[1]), std::stod(m[2]), std::stod(m[3]), m[4] == "true"});
  }
  return out;
}

WorkerClocks ReadMetrics(const std::string& path) {
  std::ifstream in(path);
  const std::regex line_re(R"re("worker":(\d+),"clock":(\d+),"batch":(\d+))re");
  WorkerClocks out;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, line_re)) continue;
    const auto worker = static_cast<uint32_t>(std::stoul(m[1]));
    out.last[worker] = std::max<int64_t>(out.last[worker], std::stoll(m[2]));
    out.samples += std::stoull(m[3]);
  }
  return out;
}

class OnArrivalBudgetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnArrivalBudgetTest, WorkersStopOnTheGlobalSampleBudget) {
  InProcessJob spec;
  JobConfig& job = spec.job;
  job.servers = 1;
  job.workers = 3;
  job.batches = {8, 8, 10};  // X = 26: the last clock takes what is left
  job.model = "mlp:8";
  job.data = "synthetic:samples=600:test=100:dim=10:classes=3";
  job.lr = 0.05;
  job.max_clocks = kBudgetClocks;
  job.eval_every = 10;
  job.seed = 3;
  job.heartbeat_ms = 500;
  job.sync = GetParam();
  // Worker 2 is about six times slower than the others.
  spec.hetero = {"linear=0.002+0.0001", "linear=0.002+0.0001",
                 "linear=0.012+0.0001"};
  spec.run_dir = std::filesystem::temp_directory_path() /
                 ("budget-" + std::to_string(getpid()));
  std::filesystem::remove_all(spec.run_dir);
  std::filesystem::create_directories(spec.run_dir);
  const InProcessResult result = RunInProcess(spec);
  const WorkerClocks clocks = ReadMetrics(spec.run_dir + "/metrics.jsonl");
  const std::vector<Evaluation> evals =
      ReadEvaluations(spec.run_dir + "/eval.jsonl");
  std::filesystem::remove_all(spec.run_dir);
  ASSERT_TRUE(result.ok()) << result.Failures();

  EXPECT_EQ(clocks.samples, uint64_t{kBudgetClocks} * 26);
  ASSERT_EQ(clocks.last.size(), 3u);
  const int64_t fast = clocks.last.at(0), slow = clocks.last.at(2);
  if (job.sync == "asp") {
    // Nobody waits for the straggler: the fast workers run far more
    // clocks, and nobody runs the max_clocks a per-worker rule would ask.
    EXPECT_GT(fast, 2 * slow) << "fast " << fast << ", slow " << slow;
    EXPECT_LT(slow, kBudgetClocks - 1);
  } else {
    // SSP(2): the fast workers stay within the bound of the slow one.
    EXPECT_LE(fast - slow, 3) << "fast " << fast << ", slow " << slow;
    EXPECT_LT(slow, kBudgetClocks);
  }
  // The evaluator read the model after every 10 clocks' worth of samples
  // (the shards' images of those points: none is skipped, it is far faster
  // than 10 clocks), stamped with the time training reached them, then the
  // final model.
  ASSERT_EQ(evals.size(), static_cast<size_t>(kBudgetClocks / 10 + 1));
  for (size_t i = 0; i < evals.size(); ++i) {
    const bool last = i + 1 == evals.size();
    EXPECT_EQ(evals[i].final, last);
    EXPECT_EQ(evals[i].clock,
              last ? kBudgetClocks : 10 * static_cast<int64_t>(i + 1));
    if (i > 0) {
      EXPECT_LE(evals[i - 1].wall_s, evals[i].wall_s);
    }
  }
  // The point at the end is the final model: the same loss to the bit.
  EXPECT_EQ(evals[evals.size() - 2].clock, kBudgetClocks);
  EXPECT_EQ(evals[evals.size() - 2].loss, evals.back().loss);
}

INSTANTIATE_TEST_SUITE_P(Policies, OnArrivalBudgetTest,
                         ::testing::Values("ssp:2", "asp"), PolicyParamName());

}  // namespace
}  // namespace lockstep
