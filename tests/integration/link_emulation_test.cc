// The emulated network link (net= in a worker's heterogeneity profile): a
// real job whose worker 1 sits behind a link that slows down at clock 5;
// its pulls and pushes take at least latency + bytes / bandwidth, and the
// worker without a link is not slowed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

// Model mlp:256,128 on Fashion-MNIST: 784*256+256 + 256*128+128 + 128*10+10
// parameters, 4 bytes each, pulled and pushed whole every clock.
constexpr double kModelBytes = 235146.0 * 4;

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

TEST(LinkEmulationTest, PullsAndPushesCrossTheWorkersLinkFromItsClock) {
  const std::string run_dir = MakeTempDir("lockstep-link") + "/run";
  TestCluster cluster;
  JobConfig job;
  job.servers = 1;
  job.workers = 2;
  // kModelBytes is this model's size.
  job.model = "mlp:256,128";
  job.train_limit = 1000;
  job.test_limit = 200;
  job.max_clocks = 10;
  job.eval_every = 0;
  ASSERT_TRUE(cluster
                  .Start(LaunchCommand(
                             job, {"--hetero", "w1:net=800/1,net=80/2@5",
                                   "--run-dir", run_dir, "--timeout-s", "120"}),
                         "launch")
                  .ok());
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(150));
  ASSERT_TRUE(exit.ok());
  ASSERT_TRUE(exit->ok()) << cluster.Output("launch");
  // worker -> clock -> (pull_s, push_s)
  std::map<int, std::map<int, std::pair<double, double>>> times;
  for (const std::string& line : ReadLines(run_dir + "/metrics.jsonl")) {
    times[static_cast<int>(JsonNumber(line, "worker"))]
         [static_cast<int>(JsonNumber(line, "clock"))] = {
             JsonNumber(line, "pull_s"), JsonNumber(line, "push_s")};
  }
  ASSERT_EQ(times[1].size(), 10u);
  const double fast_link = 0.001 + kModelBytes * 8 / 800e6;  // 10.4 ms
  const double slow_link = 0.002 + kModelBytes * 8 / 80e6;   // 96.1 ms
  std::vector<double> before, free_worker;
  for (const auto& [clock, t] : times[1]) {
    const double floor = clock < 5 ? fast_link : slow_link;
    EXPECT_GE(t.first, floor) << "pull of clock " << clock;
    EXPECT_GE(t.second, floor) << "push of clock " << clock;
    if (clock < 5) before.push_back(t.first);
  }
  for (const auto& [clock, t] : times[0]) free_worker.push_back(t.first);
  // Before clock 5 the link is ten times faster than after it.
  EXPECT_LT(MedianOf(before), slow_link / 2);
  // Worker 0 has no link: its pulls are not slowed by worker 1's.
  EXPECT_LT(MedianOf(free_worker), slow_link / 4);
  std::filesystem::remove_all(std::filesystem::path(run_dir).parent_path());
}

}  // namespace
}  // namespace lockstep
