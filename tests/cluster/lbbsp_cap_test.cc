// A worker's memory cap reaches LB-BSP: the fastest worker, whose gpu=
// profile caps it at 12 samples, is never given more although its speed
// would earn it most of the global batch; the others take the rest.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/cluster/in_process_cluster.h"

namespace lockstep {
namespace {

TEST(LbBspCapTest, TheFastestWorkerNeverGetsMoreThanItsReportedCap) {
  InProcessJob spec;
  JobConfig& job = spec.job;
  job.servers = 1;
  job.workers = 3;
  job.batches = {10, 10, 10};  // X = 30
  job.model = "mlp:8";
  job.data = "synthetic:samples=600:test=200:dim=10:classes=3";
  job.optimizer = "sgd";
  job.lr = 0.1;
  job.max_clocks = 40;
  job.eval_every = 0;
  job.seed = 3;
  job.heartbeat_ms = 500;
  job.sync = "lbbsp:analytical:last";
  job.data_order = "global";
  // Worker 0 is ~15x faster per sample, but holds at most 12.
  spec.hetero = {"gpu=0.0005/0.00005/12", "linear=0.001+0.0008",
                 "linear=0.001+0.0008"};
  spec.run_dir = std::filesystem::temp_directory_path() /
                 ("lbbsp-cap-" + std::to_string(getpid()));
  std::filesystem::remove_all(spec.run_dir);
  std::filesystem::create_directories(spec.run_dir);
  const InProcessResult result = RunInProcess(spec);
  const auto splits = BatchSplits(spec.run_dir + "/metrics.jsonl");
  std::filesystem::remove_all(spec.run_dir);
  ASSERT_TRUE(result.ok()) << result.Failures();
  ASSERT_EQ(splits.size(), 40u);
  uint32_t most = 0;
  for (const auto& [clock, by_worker] : splits) {
    uint32_t sum = 0;
    for (const auto& [w, batch] : by_worker) sum += batch;
    EXPECT_EQ(sum, 30u) << "clock " << clock;
    EXPECT_LE(by_worker.at(0), 12u) << "clock " << clock;
    most = std::max(most, by_worker.at(0));
  }
  EXPECT_EQ(most, 12u) << "the cap never bound: worker 0 was not the fastest";
}

}  // namespace
}  // namespace lockstep
