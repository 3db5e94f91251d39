// LB-BSP in global data order: however the quotas split each clock's
// global batch between the workers, and however the split changes from
// clock to clock, the commit's batch-weighted mean over the workers' slices
// is the mean gradient over the clock's X samples, so the job must train
// the model single-process minibatch SGD with batch X trains over the same
// global order. Uneven workers (one 4x slower) make the quotas uneven and
// moving; the test checks they were.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "optimizers/optimizer.h"
#include "tests/cluster/in_process_cluster.h"
#include "tests/support/reference_training.h"
#include "worker/data/dataset_registry.h"
#include "worker/global_batch_order.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

constexpr int kLbClocks = 30;
constexpr uint64_t kLbSeed = 11;

JobConfig LbBspJob(const std::string& optimizer, double lr) {
  JobConfig job;
  job.servers = 2;
  job.workers = 3;
  job.batches = {10, 10, 10};  // X = 30
  job.model = "mlp:8";
  job.data = "synthetic:samples=600:test=200:dim=10:classes=3";
  job.optimizer = optimizer;
  job.lr = lr;
  job.max_clocks = kLbClocks;
  job.eval_every = 0;
  job.seed = kLbSeed;
  job.heartbeat_ms = 500;
  job.sync = "lbbsp:analytical:last";
  job.data_order = "global";
  return job;
}

// Single-process minibatch training: clock c's batch is the next X samples
// of the global order.
std::vector<float> GlobalOrderReference(const JobConfig& job) {
  auto data = LoadDataset(DataOptions::Of(job));
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  if (!data.ok()) return {};
  return ReferenceTraining(
      job, **data, kLbClocks,
      GlobalOrderBatches(job, (*data)->shape().train_samples));
}

class LbBspEquivalenceTest
    : public ::testing::TestWithParam<std::pair<const char*, double>> {};

TEST_P(LbBspEquivalenceTest, MovingQuotasTrainSingleProcessSgdsModel) {
  const auto& [optimizer, lr] = GetParam();
  InProcessJob spec;
  spec.job = LbBspJob(optimizer, lr);
  spec.hetero = {"linear=0.001+0.0002", "linear=0.001+0.0002",
                 "linear=0.001+0.0008"};
  const std::string tag = std::to_string(getpid()) + "-" + optimizer;
  spec.dump_model =
      (std::filesystem::temp_directory_path() / ("lbbsp-model-" + tag))
          .string();
  spec.run_dir = std::filesystem::temp_directory_path() / ("lbbsp-run-" + tag);
  std::filesystem::remove_all(spec.run_dir);
  std::filesystem::create_directories(spec.run_dir);
  const InProcessResult result = RunInProcess(spec);
  const auto splits = BatchSplits(spec.run_dir + "/metrics.jsonl");
  auto cluster = ReadModelFile(spec.dump_model);
  std::filesystem::remove(spec.dump_model);
  std::filesystem::remove_all(spec.run_dir);
  ASSERT_TRUE(result.ok()) << result.Failures();
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();

  // The quotas were uneven and moved, and every clock summed to X.
  std::set<std::vector<uint32_t>> distinct;
  bool uneven = false;
  ASSERT_EQ(splits.size(), static_cast<size_t>(kLbClocks));
  for (const auto& [clock, by_worker] : splits) {
    std::vector<uint32_t> split;
    uint32_t sum = 0;
    for (const auto& [w, batch] : by_worker) {
      split.push_back(batch);
      sum += batch;
      uneven = uneven || batch != 10;
    }
    EXPECT_EQ(sum, 30u) << "clock " << clock;
    distinct.insert(split);
  }
  EXPECT_TRUE(uneven);
  EXPECT_GE(distinct.size(), 2u) << "the quotas never changed";

  const std::vector<float> reference = GlobalOrderReference(spec.job);
  ASSERT_EQ(cluster->size(), reference.size());
  double worst = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double err = std::fabs((*cluster)[i] - reference[i]);
    worst = std::max(worst, err);
    ASSERT_LE(err, 1e-5 * std::max(1.0, std::fabs(double{reference[i]})))
        << "parameter " << i;
  }
  std::cout << optimizer << ": " << distinct.size()
            << " distinct splits, worst difference " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(Optimizers, LbBspEquivalenceTest,
                         ::testing::Values(std::make_pair("sgd", 0.1),
                                           std::make_pair("adam", 0.01)),
                         [](const auto& info) {
                           return std::string(info.param.first);
                         });

}  // namespace
}  // namespace lockstep
