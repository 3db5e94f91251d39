// Roles started the way a cluster engine starts them: no --coordinator and
// no --rank on any command line, only the environment the engine sets.
// Here that is a Kubeflow TFJob's TF_CONFIG (common/engine/tf_config.h);
// `env` sets it as the engine would, then runs the real binary.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "tests/integration/test_cluster.h"
#include "tests/support/launch_args.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

constexpr auto kPlacementTimeout = std::chrono::seconds(120);

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// The TF_CONFIG the TFJob operator gives task `type` `index` of a job with
// one chief at `chief`, servers at `ps` and two workers.
std::string TfConfig(int chief, const std::vector<int>& ps,
                     const std::string& type, int index) {
  auto list = [](const std::vector<int>& ports) {
    std::string out;
    for (const int port : ports) {
      out += (out.empty() ? "\"" : ", \"") + std::string("127.0.0.1:") +
             std::to_string(port) + "\"";
    }
    return "[" + out + "]";
  };
  return R"({"cluster": {"chief": )" + list({chief}) + R"(, "ps": )" +
         list(ps) + R"(, "worker": ["127.0.0.1:1", "127.0.0.1:2"]},)" +
         R"( "task": {"type": ")" + type + R"(", "index": )" +
         std::to_string(index) + "}}";
}

TEST(EnginePlacementTest, ATfJobsTasksFindEachOtherFromTfConfigAlone) {
  const std::string run_dir = MakeTempDir("lockstep-tfjob");
  const int chief = FreeLoopbackPort();
  // Three servers and two workers: neither is the coordinator's default.
  const std::vector<int> ps = {FreeLoopbackPort(), FreeLoopbackPort(),
                               FreeLoopbackPort()};
  const std::set<int> distinct = {chief, ps[0], ps[1], ps[2]};
  ASSERT_EQ(distinct.size(), 4u);
  ASSERT_EQ(distinct.count(0), 0u);
  JobConfig job;
  job.servers = 3;
  job.workers = 2;
  job.model = "softmax";
  job.data = "synthetic";
  job.max_clocks = 60;
  job.evaluators = 0;
  job.lr = 0.1;
  // Every task's TF_CONFIG address is on 127.0.0.1, so each listens there
  // (an IPv4 address is bound as given; a name would mean every interface).
  std::vector<std::string> coordinator = {
      "env",
      "TF_CONFIG=" + TfConfig(chief, ps, "chief", 0),
      BinaryPath("lockstep-coordinator"),
      "--metrics-listen",
      "",
      "--run-dir",
      run_dir};
  // The job's sizes come from TF_CONFIG's ps and worker lists.
  const std::vector<std::string> args = LaunchArgs(job);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--servers" || args[i] == "--workers") {
      ++i;  // and its value
      continue;
    }
    coordinator.push_back(args[i]);
  }
  TestCluster cluster;
  ASSERT_TRUE(cluster.Start(coordinator, "coordinator").ok());
  for (int s = 0; s < 3; ++s) {
    ASSERT_TRUE(cluster
                    .Start({"env", "TF_CONFIG=" + TfConfig(chief, ps, "ps", s),
                            BinaryPath("lockstep-server")},
                           "server " + std::to_string(s))
                    .ok());
  }
  // Started in reverse order: ranks come from TF_CONFIG, not arrival.
  for (int w = 1; w >= 0; --w) {
    ASSERT_TRUE(
        cluster
            .Start({"env", "TF_CONFIG=" + TfConfig(chief, ps, "worker", w),
                    BinaryPath("lockstep-worker")},
                   "worker " + std::to_string(w))
            .ok());
  }
  auto exit = cluster.WaitFor("coordinator", kPlacementTimeout);
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  for (int s = 0; s < 3; ++s) {
    const std::string name = "server " + std::to_string(s);
    EXPECT_TRUE(cluster.ExitOf(name).ok()) << cluster.Output(name);
    EXPECT_TRUE(cluster.Printed(name, "placed by tf_config"))
        << cluster.Output(name);
    // Each ps task serves the shard of its index, at its TF_CONFIG port.
    EXPECT_TRUE(cluster.Printed(
        name, "shard " + std::to_string(s) + " serves dense keys"))
        << cluster.Output(name);
    EXPECT_TRUE(cluster.Printed(name, "127.0.0.1:" + std::to_string(ps[s])))
        << cluster.Output(name);
  }
  for (int w = 0; w < 2; ++w) {
    const std::string name = "worker " + std::to_string(w);
    EXPECT_TRUE(cluster.ExitOf(name).ok()) << cluster.Output(name);
    EXPECT_TRUE(cluster.Printed(name, "rank=" + std::to_string(w)))
        << cluster.Output(name);
  }
  const std::string summary = ReadFile(run_dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), 60) << summary;
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0.6) << summary;
}

TEST(EnginePlacementTest, ARoleStartedAsAnotherTaskSaysSoAndStops) {
  TestCluster cluster;
  ASSERT_TRUE(cluster
                  .Start({"env", "TF_CONFIG=" + TfConfig(7400, {7401}, "ps", 0),
                          BinaryPath("lockstep-worker")},
                         "worker")
                  .ok());
  auto exit = cluster.WaitFor("worker", std::chrono::seconds(20));
  ASSERT_TRUE(exit.ok());
  EXPECT_FALSE(exit->ok());
  EXPECT_TRUE(cluster.Printed(
      "worker", "TF_CONFIG names this task a server (lockstep-server)"))
      << cluster.Output("worker");
}

}  // namespace
}  // namespace lockstep
