#include "tools/launch/role_commands.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {
namespace {

using Argv = std::vector<std::string>;

constexpr int kLauncherPid = 42;
constexpr char kEndpoint[] = "tcp://127.0.0.1:5555";

class RoleCommandsTest : public ::testing::Test {
 protected:
  RoleCommandsTest() {
    binaries_.coordinator = "/b/lockstep-coordinator";
    binaries_.server = "/b/lockstep-server";
    binaries_.worker = "/b/lockstep-worker";
    options_.keys_dir = "/runs/r/keys";
  }

  RoleCommands Commands() const {
    return RoleCommands(options_, binaries_, nullptr, kLauncherPid);
  }

  LaunchOptions options_;
  RoleBinaries binaries_;
};

TEST_F(RoleCommandsTest, CoordinatorGetsTheJobAFreePortAndTheRunDir) {
  Argv expected = {"/b/lockstep-coordinator"};
  for (const std::string& flag : JobConfigToFlags(options_.job)) {
    expected.push_back(flag);
  }
  expected.insert(expected.end(), {"--listen", "tcp://127.0.0.1:0", "--run-dir",
                                   "/runs/r", "--metrics-listen", "127.0.0.1:0",
                                   "--keys", "/runs/r/keys/coordinator.key"});
  EXPECT_EQ(Commands().Coordinator("/runs/r"), expected);

  options_.resume = true;
  options_.verbose = true;
  expected.insert(expected.end(), {"--resume", "-v"});
  EXPECT_EQ(Commands().Coordinator("/runs/r"), expected);
}

// The launcher's metrics flags are the coordinator's.
TEST_F(RoleCommandsTest, TheMetricsFlagsPassToTheCoordinator) {
  options_.metrics_listen = "0.0.0.0:9400";
  options_.metrics_token_file = "/etc/token";
  const Argv argv = Commands().Coordinator("/runs/r");
  const auto at = std::find(argv.begin(), argv.end(), "--metrics-listen");
  ASSERT_NE(at, argv.end());
  EXPECT_EQ(*(at + 1), "0.0.0.0:9400");
  const auto token =
      std::find(argv.begin(), argv.end(), "--metrics-token-file");
  ASSERT_NE(token, argv.end());
  EXPECT_EQ(*(token + 1), "/etc/token");
}

TEST_F(RoleCommandsTest, ServerBindsItsDataPortAndGetsNoWorkerFlags) {
  options_.hetero_profiles[1] = "x4";
  options_.devices[1] = "cuda";
  options_.worker_commands[1] = {"/usr/bin/python3", "train.py"};
  EXPECT_EQ(Commands().Peer("server", 1, kEndpoint),
            (Argv{"/b/lockstep-server", "--coordinator", kEndpoint, "--keys",
                  "/runs/r/keys/server.key", "--listen",
                  "ipc:///tmp/lockstep-42-server-1.sock", "--rank", "1"}));
}

TEST_F(RoleCommandsTest, ServerDataEndpointFollowsTheDataTransport) {
  EXPECT_EQ(Commands().ServerDataEndpoint(0),
            "ipc:///tmp/lockstep-42-server-0.sock");
  options_.data_transport = "tcp";
  options_.host = "10.77.0.1";
  EXPECT_EQ(Commands().ServerDataEndpoint(0), "tcp://10.77.0.1:0");
  EXPECT_EQ(Commands().Peer("server", 0, kEndpoint)[6], "tcp://10.77.0.1:0");
}

TEST_F(RoleCommandsTest, WorkerGetsItsOwnProfileAndDevice) {
  options_.hetero_profiles[1] = "x4";
  options_.devices[1] = "cuda";
  options_.verbose = true;
  EXPECT_EQ(Commands().Peer("worker", 1, kEndpoint),
            (Argv{"/b/lockstep-worker", "--coordinator", kEndpoint, "--keys",
                  "/runs/r/keys/worker.key", "--rank", "1", "--hetero", "x4",
                  "--device", "cuda", "-v"}));
  EXPECT_EQ(Commands().Peer("worker", 0, kEndpoint),
            (Argv{"/b/lockstep-worker", "--coordinator", kEndpoint, "--keys",
                  "/runs/r/keys/worker.key", "--rank", "0", "-v"}));
}

TEST_F(RoleCommandsTest, WorkerCommandReplacesTheWorkerBinary) {
  options_.worker_commands[1] = {"/usr/bin/python3", "train.py"};
  EXPECT_EQ(Commands().Peer("worker", 1, kEndpoint),
            (Argv{"/usr/bin/python3", "train.py", "--coordinator", kEndpoint,
                  "--keys", "/runs/r/keys/worker.key", "--rank", "1"}));
  EXPECT_EQ(Commands().Peer("worker", 0, kEndpoint)[0], "/b/lockstep-worker");
}

TEST_F(RoleCommandsTest, EvaluatorRunsWorkerZerosProgramAndDevice) {
  options_.worker_commands[0] = {"/usr/bin/python3", "train.py"};
  options_.devices[0] = "cuda:0";
  options_.devices[3] = "cpu";
  options_.hetero_profiles[0] = "x4";
  EXPECT_EQ(Commands().Peer("evaluator", 3, kEndpoint),
            (Argv{"/usr/bin/python3", "train.py", "--coordinator", kEndpoint,
                  "--keys", "/runs/r/keys/worker.key", "--evaluator",
                  "--device", "cuda:0"}));
  options_.worker_commands.clear();
  options_.devices.clear();
  options_.verbose = true;
  EXPECT_EQ(Commands().Peer("evaluator", 0, kEndpoint),
            (Argv{"/b/lockstep-worker", "--coordinator", kEndpoint, "--keys",
                  "/runs/r/keys/worker.key", "--evaluator", "-v"}));
}

TEST_F(RoleCommandsTest, SecurityOffIsSaidToEveryRole) {
  options_.security = "off";
  options_.keys_dir.clear();
  const Argv coordinator = Commands().Coordinator("/runs/r");
  EXPECT_EQ(Argv(coordinator.end() - 2, coordinator.end()),
            (Argv{"--security", "off"}));
  for (const char* role : {"server", "worker", "evaluator"}) {
    const Argv peer = Commands().Peer(role, 0, kEndpoint);
    EXPECT_EQ(Argv(peer.begin() + 3, peer.begin() + 5),
              (Argv{"--security", "off"}))
        << role;
  }
}

TEST(PeerStartOrderTest, ServersThenWorkersThenTheEvaluator) {
  JobConfig job;
  job.servers = 2;
  job.workers = 3;
  job.evaluators = 1;
  const std::vector<std::pair<std::string, int>> expected = {
      {"server", 0}, {"server", 1}, {"worker", 0},
      {"worker", 1}, {"worker", 2}, {"evaluator", 0}};
  EXPECT_EQ(PeerStartOrder(job), expected);
  job.evaluators = 0;
  EXPECT_EQ(PeerStartOrder(job).size(), 5u);
  EXPECT_EQ(PeerStartOrder(job).back(),
            std::make_pair(std::string("worker"), 2));
}

}  // namespace
}  // namespace lockstep
