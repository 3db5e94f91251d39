// ASP with a staleness rule over several shards: each shard counts its own
// logical clocks, and pushes interleave differently on each, so a push
// could be stale on one shard and fresh on another, applied on half the
// model and dropped on the rest. Shard 0 decides and the others follow
// (wire::PushVerdict): every push is dropped on every shard or on none.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/cluster/in_process_cluster.h"
#include "tests/support/param_names.h"

namespace lockstep {
namespace {

class StalenessVerdictTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StalenessVerdictTest, APushIsDroppedOnEveryShardOrOnNone) {
  InProcessJob spec;
  JobConfig& job = spec.job;
  job.servers = 3;
  job.workers = 4;
  job.batches = {8};
  job.model = "mlp:8";
  job.data = "synthetic:samples=600:test=100:dim=10:classes=3";
  job.lr = 0.05;
  job.max_clocks = 60;
  job.eval_every = 0;
  job.seed = 5;
  job.heartbeat_ms = 500;
  job.sync = GetParam();
  spec.hetero = {"linear=0.001+0.0001", "linear=0.001+0.0002",
                 "linear=0.001+0.0003", "linear=0.001+0.0004"};
  spec.run_dir = std::filesystem::temp_directory_path() /
                 ("verdict-" + std::to_string(getpid()));
  std::filesystem::remove_all(spec.run_dir);
  std::filesystem::create_directories(spec.run_dir);
  const InProcessResult result = RunInProcess(spec);
  std::ifstream in(spec.run_dir + "/metrics.jsonl");
  const std::regex re(R"re("dropped_shards":(\d+))re");
  int pushes = 0, dropped = 0;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    ASSERT_TRUE(std::regex_search(line, m, re)) << line;
    const int shards = std::stoi(m[1]);
    EXPECT_TRUE(shards == 0 || shards == 3) << line;
    ++pushes;
    dropped += shards == 3 ? 1 : 0;
  }
  in.close();
  std::filesystem::remove_all(spec.run_dir);
  ASSERT_TRUE(result.ok()) << result.Failures();
  EXPECT_GT(pushes, 100);
  // With four workers and drop=0 most pushes are stale: the rule is live.
  EXPECT_GT(dropped, 0);
  std::cout << GetParam() << ": " << dropped << " of " << pushes
            << " pushes dropped on all 3 shards\n";
}

INSTANTIATE_TEST_SUITE_P(Rules, StalenessVerdictTest,
                         ::testing::Values("asp:drop=0", "asp:scale:drop=0"),
                         PolicyParamName());

}  // namespace
}  // namespace lockstep
