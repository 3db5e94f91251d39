// Whole jobs as threads of this process. BSP over the parameter server with
// per-worker batches x_w must equal single-process minibatch SGD with batch
// sum(x_w) over the same sample order, on every data transport and for
// every optimizer; and every policy must run a job to its end.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "optimizers/optimizer.h"
#include "tests/cluster/in_process_cluster.h"
#include "tests/support/param_names.h"
#include "tests/support/reference_training.h"
#include "worker/data/dataset_registry.h"
#include "worker/sample_stream.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

constexpr int kClocks = 30;
constexpr uint64_t kSeed = 7;
constexpr char kData[] = "synthetic:samples=600:test=200:dim=10:classes=3";

struct OptimizerCase {
  const char* name;
  double lr;
};

JobConfig Job(const OptimizerCase& opt) {
  JobConfig job;
  job.servers = 2;
  job.workers = 3;
  job.batches = {4, 8, 12};
  job.model = "mlp:8";
  job.data = kData;
  job.optimizer = opt.name;
  job.lr = opt.lr;
  job.max_clocks = kClocks;
  job.eval_every = 0;
  job.seed = kSeed;
  // Liveness (10 heartbeats) far above what a sanitizer-slowed thread
  // can stall on a busy machine: nothing here is about dead peers.
  job.heartbeat_ms = 500;
  return job;
}

// Single-process minibatch SGD over the union of the workers' batches.
std::vector<float> ReferenceTraining(const JobConfig& job) {
  auto data = LoadDataset(DataOptions::Of(job));
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  if (!data.ok()) return {};
  return lockstep::ReferenceTraining(
      job, **data, kClocks,
      PartitionedBatches(job, (*data)->shape().train_samples));
}

std::string TempFile(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(getpid()) + ".bin"))
      .string();
}

class InProcessBspTest
    : public ::testing::TestWithParam<std::tuple<std::string, OptimizerCase>> {
};

TEST_P(InProcessBspTest, ParameterServerMatchesSingleProcessSgd) {
  const auto& [transport, opt] = GetParam();
  InProcessJob spec;
  spec.job = Job(opt);
  spec.data_listen = transport;
  spec.dump_model = TempFile("inprocess-model");
  const InProcessResult result = RunInProcess(spec);
  ASSERT_TRUE(result.ok()) << result.Failures();
  auto cluster = ReadModelFile(spec.dump_model);
  std::filesystem::remove(spec.dump_model);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  const std::vector<float> reference = ReferenceTraining(spec.job);
  ASSERT_EQ(cluster->size(), reference.size());
  double worst = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double err = std::fabs((*cluster)[i] - reference[i]);
    worst = std::max(worst, err);
    ASSERT_LE(err, 1e-5 * std::max(1.0, std::fabs(double{reference[i]})))
        << "parameter " << i;
  }
  std::cout << opt.name << " over " << transport << ": worst difference "
            << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(
    TransportsAndOptimizers, InProcessBspTest,
    ::testing::Combine(::testing::ValuesIn(AllDataTransports()),
                       ::testing::Values(OptimizerCase{"sgd", 0.1},
                                         OptimizerCase{"momentum", 0.05},
                                         OptimizerCase{"adam", 0.01},
                                         OptimizerCase{"adagrad", 0.05})),
    [](const auto& info) {
      std::string transport = std::get<0>(info.param);
      transport = transport.substr(0, transport.find(':'));
      for (char& c : transport) {
        if (c == '+') c = '_';
      }
      return transport + "_" + std::get<1>(info.param).name;
    });

// Under the apply-on-arrival policies a push is a share n_w / X of its
// logical clock (UpdateStep, ArrivalClock); with one worker that share is
// the whole clock, so SSP(0) and ASP must train BSP's model bit for bit,
// for every optimizer and with weight decay.
class OnArrivalOneWorkerTest : public ::testing::TestWithParam<OptimizerCase> {
};

std::vector<float> OneWorkerModel(const OptimizerCase& opt,
                                  const std::string& sync) {
  InProcessJob spec;
  spec.job = Job(opt);
  spec.job.servers = 2;
  spec.job.workers = 1;
  spec.job.batches = {12};
  spec.job.weight_decay = 0.01;
  spec.job.data_order = "global";
  spec.job.sync = sync;
  spec.dump_model = TempFile("one-worker-" + sync.substr(0, 3));
  const InProcessResult result = RunInProcess(spec);
  EXPECT_TRUE(result.ok()) << sync << ": " << result.Failures();
  auto model = ReadModelFile(spec.dump_model);
  std::filesystem::remove(spec.dump_model);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : std::vector<float>{};
}

TEST_P(OnArrivalOneWorkerTest, SspZeroAndAspTrainBspsModel) {
  const std::vector<float> bsp = OneWorkerModel(GetParam(), "bsp");
  ASSERT_FALSE(bsp.empty());
  for (const char* sync : {"ssp:0", "asp"}) {
    const std::vector<float> other = OneWorkerModel(GetParam(), sync);
    ASSERT_EQ(other.size(), bsp.size()) << sync;
    for (size_t i = 0; i < bsp.size(); ++i) {
      ASSERT_EQ(other[i], bsp[i]) << sync << " parameter " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, OnArrivalOneWorkerTest,
                         ::testing::Values(OptimizerCase{"sgd", 0.1},
                                           OptimizerCase{"momentum", 0.05},
                                           OptimizerCase{"adam", 0.01},
                                           OptimizerCase{"adagrad", 0.05}),
                         [](const auto& info) {
                           return std::string(info.param.name);
                         });

class InProcessPolicyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InProcessPolicyTest, RunsTheJobToItsEndAndLearns) {
  InProcessJob spec;
  spec.job = Job({"momentum", 0.05});
  spec.job.sync = GetParam();
  spec.job.max_clocks = 60;
  spec.job.eval_every = 20;
  spec.run_dir = std::filesystem::temp_directory_path() /
                 ("inprocess-" + std::to_string(getpid()));
  std::filesystem::remove_all(spec.run_dir);
  std::filesystem::create_directories(spec.run_dir);
  const InProcessResult result = RunInProcess(spec);
  ASSERT_TRUE(result.ok()) << result.Failures();
  std::ifstream in(spec.run_dir + "/summary.json");
  std::string summary((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
  std::filesystem::remove_all(spec.run_dir);
  EXPECT_NE(summary.find("\"policy\":\""), std::string::npos) << summary;
  // Three well-separated blobs: any policy gets most of them right.
  const size_t at = summary.find("\"test_accuracy\":");
  ASSERT_NE(at, std::string::npos) << summary;
  EXPECT_GT(std::stod(summary.substr(at + 16)), 0.6) << summary;
}

INSTANTIATE_TEST_SUITE_P(Policies, InProcessPolicyTest,
                         ::testing::Values("bsp", "ssp:2", "asp", "backup:1",
                                           "lbbsp", "lbbsp:numerical"),
                         PolicyParamName());

}  // namespace
}  // namespace lockstep
