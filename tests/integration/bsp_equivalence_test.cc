// BSP over the parameter server with W workers and per-worker batches x_w
// must equal single-process minibatch SGD with batch sum(x_w) over the same
// sample order: this proves the batch-weighted aggregation and the server
// optimizers end to end (real processes, real sockets), for the MLP and for
// a small CNN.
#include <gtest/gtest.h>

#include <cmath>

#include "common/job_config.h"
#include "optimizers/optimizer.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/reference_training.h"
#include "worker/data/dataset_registry.h"
#include "worker/models/model_registry.h"
#include "worker/sample_stream.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

constexpr int kClocks = 50;
constexpr uint64_t kTrainLimit = 3000;
constexpr uint64_t kSeed = 7;

struct Case {
  std::string model;
  std::string optimizer;
  double lr;
  std::vector<uint32_t> batches;
};

std::string BatchFlag(const std::vector<uint32_t>& batches) {
  std::string flag;
  for (uint32_t b : batches)
    flag += (flag.empty() ? "" : ",") + std::to_string(b);
  return flag;
}

std::unique_ptr<Dataset> TrainingData() {
  DataOptions options;
  options.spec = "fashion-mnist";
  options.data_dir = "/usr/share/datasets/fashion-mnist";
  options.train_limit = kTrainLimit;
  options.test_limit = 500;
  auto data = LoadDataset(options);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  return data.ok() ? std::move(data).value() : nullptr;
}

// The model the servers start from.
std::vector<float> InitialModel(const Model& model) {
  std::vector<float> params(model.shape().dense_params());
  InitDenseParams(model.shape(), kSeed, params);
  return params;
}

// Single-process minibatch SGD over the union of the workers' batches.
std::vector<float> ReferenceTraining(const Case& c) {
  JobConfig job;
  job.model = c.model;
  job.optimizer = c.optimizer;
  job.lr = c.lr;
  job.batches = c.batches;
  job.workers = static_cast<uint32_t>(c.batches.size());
  job.seed = kSeed;
  const std::unique_ptr<Dataset> data = TrainingData();
  return lockstep::ReferenceTraining(job, *data, kClocks,
                                     PartitionedBatches(job, kTrainLimit));
}

std::vector<float> ClusterTraining(const Case& c, const std::string& dir) {
  TestCluster cluster;
  const std::string model_file = dir + "/model.bin";
  JobConfig job;
  job.servers = 2;
  job.workers = static_cast<uint32_t>(c.batches.size());
  job.model = c.model;
  job.batches = c.batches;
  job.optimizer = c.optimizer;
  job.lr = c.lr;
  job.max_clocks = kClocks;
  // The reference trains on the same first kTrainLimit samples.
  job.train_limit = kTrainLimit;
  job.test_limit = 500;
  job.eval_every = 0;
  job.seed = kSeed;
  Status started = cluster.StartCoordinator(job, {"--run-dir", dir});
  EXPECT_TRUE(started.ok()) << started.ToString();
  for (int s = 0; s < 2; ++s) EXPECT_TRUE(cluster.StartServer(s).ok());
  for (size_t w = 0; w < c.batches.size(); ++w) {
    EXPECT_TRUE(cluster.StartWorker(static_cast<int>(w)).ok());
  }
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
  EXPECT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  auto params = ReadModelFile(model_file);
  EXPECT_TRUE(params.ok()) << params.status().ToString()
                           << cluster.Output("worker 0");
  return params.ok() ? *params : std::vector<float>();
}

class BspEquivalenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(BspEquivalenceTest, ParameterServerMatchesSingleProcessSgd) {
  const Case& c = GetParam();
  const std::string dir = MakeTempDir("lockstep-equiv");
  const std::vector<float> reference = ReferenceTraining(c);
  const std::vector<float> cluster = ClusterTraining(c, dir);
  ASSERT_EQ(cluster.size(), reference.size());
  const std::vector<float> initial =
      InitialModel(**CreateModel(c.model, TrainingData()->shape()));
  size_t moved = 0;
  double worst = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double ref = reference[i];
    const double err = std::fabs(cluster[i] - ref);
    const double tolerance = std::fabs(ref) < 1 ? 1e-5 : 1e-5 * std::fabs(ref);
    worst = std::max(worst, err);
    ASSERT_LE(err, tolerance) << "parameter " << i << ": cluster " << cluster[i]
                              << " reference " << ref;
    if (reference[i] != initial[i]) ++moved;
  }
  // Training really happened: most parameters left their initial values.
  EXPECT_GT(moved, reference.size() / 2);
  std::cout << c.model << " " << c.optimizer << " batches "
            << BatchFlag(c.batches) << ": worst abs difference " << worst
            << " over " << reference.size() << " parameters\n";
}

INSTANTIATE_TEST_SUITE_P(
    Optimizers, BspEquivalenceTest,
    ::testing::Values(Case{"mlp:24", "sgd", 0.1, {8, 8, 8}},
                      Case{"mlp:24", "momentum", 0.05, {8, 8, 8}},
                      Case{"mlp:24", "adam", 0.002, {8, 8, 8}},
                      Case{"mlp:24", "adagrad", 0.02, {8, 8, 8}},
                      Case{"mlp:24", "sgd", 0.1, {4, 8, 12}},
                      Case{"mlp:24", "momentum", 0.05, {2, 6, 16}},
                      Case{"mlp:24", "adam", 0.002, {12, 4, 8}},
                      Case{"cnn:c3x4,p2,f16", "momentum", 0.05, {4, 8, 12}},
                      Case{"cnn:c3x4,p2,f16", "adam", 0.002, {8, 8, 8}}),
    [](const auto& info) {
      return std::string(info.param.model[0] == 'c' ? "cnn_" : "") +
             info.param.optimizer + "_" +
             (info.param.batches[0] == info.param.batches[1] ? "equal"
                                                             : "unequal");
    });

}  // namespace
}  // namespace lockstep
