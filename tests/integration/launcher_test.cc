// lockstep-launch with the real role binaries: a job runs to the end and
// leaves a complete run directory; a worker killed mid-run makes the
// launcher stop every role, name the dead worker and exit non-zero.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "common/security/job_keys.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

// Children of `parent` (from /proc) with their command lines.
std::map<pid_t, std::string> ChildrenOf(pid_t parent) {
  std::map<pid_t, std::string> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close + 2, "%c %d", &state, &ppid) != 2 ||
        ppid != parent) {
      continue;
    }
    std::string cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    children[pid] = cmdline;
  }
  closedir(proc);
  return children;
}

bool Alive(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  const auto close = stat.rfind(')');
  return close != std::string::npos && stat[close + 2] != 'Z';
}

TEST(LauncherTest, JobRunsToTheEndAndWritesTheRunDirectory) {
  const std::string run_dir = MakeTempDir("lockstep-launch") + "/run";
  TestCluster cluster;
  JobConfig job;
  job.servers = 2;
  job.workers = 2;
  job.model = "softmax";
  job.max_clocks = 120;
  job.train_limit = 3000;
  job.test_limit = 1000;
  job.eval_every = 50;
  auto launcher = cluster.Start(
      LaunchCommand(job, {"--run-dir", run_dir, "--timeout-s", "120"}),
      "launch");
  ASSERT_TRUE(launcher.ok());
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(150));
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->ok()) << cluster.Output("launch");
  for (const std::string file :
       {"config.json", "metrics.jsonl", "eval.jsonl", "summary.json",
        "logs/coordinator.log", "logs/server-0.log", "logs/server-1.log",
        "logs/worker-0.log", "logs/worker-1.log"}) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(run_dir) / file))
        << file;
  }
  EXPECT_EQ(ReadLines(run_dir + "/metrics.jsonl").size(), 240u);
  EXPECT_NE(ReadFile(run_dir + "/config.json").find("\"model\":\"softmax\""),
            std::string::npos);
  EXPECT_EQ(JsonNumber(ReadFile(run_dir + "/summary.json"), "clocks"), 120);
  // The default data transport on one machine: Unix-domain sockets, whose
  // files are gone once the job ended.
  EXPECT_NE(
      ReadFile(run_dir + "/config.json").find("\"data_transport\":\"auto\""),
      std::string::npos);
  int ipc_servers = 0;
  for (const std::string& line : ReadLines(run_dir + "/logs/server-0.log")) {
    if (line.find(" on ipc:///tmp/lockstep-") != std::string::npos) {
      ++ipc_servers;
    }
  }
  EXPECT_EQ(ipc_servers, 1);
  for (const auto& entry : std::filesystem::directory_iterator("/tmp")) {
    EXPECT_EQ(entry.path().string().find(
                  "/tmp/lockstep-" + std::to_string(*launcher) + "-server-"),
              std::string::npos);
  }
}

// Each data transport the launcher offers trains the same job, with the
// data plane authenticated (the default) or sealed (--security aead: the
// launcher's keys say so and every server seals its records).
class LauncherTransportTest
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(LauncherTransportTest, TrainsOverEachDataTransport) {
  const auto& [transport, security] = GetParam();
  const std::string run_dir = MakeTempDir("lockstep-transport") + "/run";
  TestCluster cluster;
  JobConfig job;
  job.servers = 2;
  job.workers = 2;
  job.model = "softmax";
  job.max_clocks = 60;
  job.train_limit = 2000;
  job.test_limit = 500;
  job.eval_every = 0;
  ASSERT_TRUE(
      cluster
          .Start(LaunchCommand(job, {"--run-dir", run_dir, "--timeout-s", "90",
                                     "--data-transport", transport,
                                     "--security", security}),
                 "launch")
          .ok());
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->ok()) << cluster.Output("launch");
  EXPECT_EQ(JsonNumber(ReadFile(run_dir + "/summary.json"), "clocks"), 60);
  EXPECT_GT(JsonNumber(ReadFile(run_dir + "/summary.json"), "test_accuracy"),
            0.5);
  EXPECT_NE(
      ReadFile(run_dir + "/keys/worker.key").find("data-plane " + security),
      std::string::npos);
  for (const char* log : {"/logs/server-0.log", "/logs/server-1.log"}) {
    const std::string text = ReadFile(run_dir + log);
    EXPECT_NE(text.find("data plane: " + security + " ("), std::string::npos)
        << log;
    // No connection was refused or cut: every record opened.
    EXPECT_EQ(text.find("closed a data connection"), std::string::npos) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, LauncherTransportTest,
                         ::testing::Values(std::make_tuple("tcp", "auth"),
                                           std::make_tuple("zmq-tcp", "auth"),
                                           std::make_tuple("zmq-ipc", "auth"),
                                           std::make_tuple("ipc", "aead"),
                                           std::make_tuple("tcp", "aead")));

// A run directory keeps the keys it was made with: a launch that asks for
// another data plane is refused before any role starts, not run the other
// way.
TEST(LauncherTest, RefusesKeysOfAnotherDataPlane) {
  const std::string run_dir = MakeTempDir("lockstep-keys-mode") + "/run";
  ASSERT_TRUE(WriteJobKeys(run_dir + "/keys", DataSecurity::kAuth).ok());
  TestCluster cluster;
  JobConfig job;
  job.model = "softmax";
  job.max_clocks = 10;
  ASSERT_TRUE(cluster
                  .Start(LaunchCommand(job, {"--run-dir", run_dir, "--security",
                                             "aead", "--timeout-s", "30"}),
                         "launch")
                  .ok());
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(60));
  ASSERT_TRUE(exit.ok());
  EXPECT_FALSE(exit->ok());
  EXPECT_NE(cluster.Output("launch").find(
                "holds keys of a auth data plane, not --security aead"),
            std::string::npos)
      << cluster.Output("launch");
  EXPECT_FALSE(std::filesystem::exists(run_dir + "/logs/coordinator.log"));
}

// Starts lockstep-launch, waits until training is under way, and SIGKILLs
// worker 1 by its pid. Returns the launcher's children as they were.
std::map<pid_t, std::string> LaunchAndKillWorker(
    TestCluster& cluster, const std::string& run_dir, int64_t clocks,
    const std::vector<std::string>& extra) {
  JobConfig job;
  job.servers = 1;
  job.workers = 3;
  job.model = "softmax";
  job.max_clocks = clocks;
  job.train_limit = 3000;
  job.test_limit = 500;
  job.eval_every = 0;
  // Short, so the dead worker is removed soon.
  job.heartbeat_ms = 100;
  std::vector<std::string> argv =
      LaunchCommand(job, {"--run-dir", run_dir, "--timeout-s", "120"});
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto launcher = cluster.Start(argv, "launch");
  EXPECT_TRUE(launcher.ok());
  std::map<pid_t, std::string> roles;
  pid_t victim = 0;
  for (int i = 0; i < 300 && victim == 0 && launcher.ok(); ++i) {
    cluster.Pump(std::chrono::milliseconds(100));
    if (ReadLines(run_dir + "/metrics.jsonl").size() < 30) continue;
    roles = ChildrenOf(*launcher);
    for (const auto& [pid, cmd] : roles) {
      if (cmd.find("lockstep-worker") != std::string::npos &&
          cmd.find("--rank 1") != std::string::npos) {
        victim = pid;
      }
    }
  }
  EXPECT_NE(victim, 0) << cluster.Output("launch");
  EXPECT_EQ(roles.size(), 6u);  // coordinator, 1 server, 3 workers, evaluator
  if (victim != 0) {
    EXPECT_EQ(kill(victim, SIGKILL), 0);
  }
  return roles;
}

TEST(LauncherTest, KilledWorkerStopsTheJobWhenAskedAndIsReported) {
  const std::string run_dir = MakeTempDir("lockstep-kill") + "/run";
  TestCluster cluster;
  const auto roles = LaunchAndKillWorker(cluster, run_dir, 1000000,
                                         {"--stop-on-worker-failure"});

  auto exit = cluster.WaitFor("launch", std::chrono::seconds(30));
  ASSERT_TRUE(exit.ok()) << "launcher hung after a worker died";
  EXPECT_EQ(exit->code, 1) << cluster.Output("launch");
  const std::string out = cluster.Output("launch");
  EXPECT_NE(out.find("worker 1"), std::string::npos) << out;
  EXPECT_NE(out.find("signal 9"), std::string::npos) << out;
  for (const auto& [pid, cmd] : roles) {
    EXPECT_FALSE(Alive(pid)) << "left running: " << cmd;
  }
}

// By default the coordinator removes the dead worker after the heartbeat
// timeout and the others finish the job.
TEST(LauncherTest, KilledWorkerIsRemovedAndTheJobGoesOn) {
  const std::string run_dir = MakeTempDir("lockstep-survive") + "/run";
  TestCluster cluster;
  const auto roles = LaunchAndKillWorker(
      cluster, run_dir, 3000, {"--hetero", "*:linear=0.001+0.00001"});
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(90));
  ASSERT_TRUE(exit.ok()) << "the job hung after a worker died";
  EXPECT_TRUE(exit->ok()) << cluster.Output("launch");
  const std::string summary = ReadFile(run_dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), 3000) << summary;
  EXPECT_EQ(JsonNumber(summary, "dead_workers"), 1) << summary;
  EXPECT_NE(cluster.Output("launch").find("worker 1"), std::string::npos);
  for (const auto& [pid, cmd] : roles) {
    EXPECT_FALSE(Alive(pid)) << "left running: " << cmd;
  }
}

// --device reaches each worker: a worker told to use a GPU this machine
// lacks stops at start with the reason, and the launcher reports it.
TEST(LauncherTest, AWorkerOnAMissingDeviceStopsWithTheReason) {
  const std::string run_dir = MakeTempDir("lockstep-device") + "/run";
  TestCluster cluster;
  JobConfig job;
  job.servers = 1;
  job.workers = 2;
  job.model = "softmax";
  job.max_clocks = 50;
  job.train_limit = 1000;
  job.test_limit = 200;
  auto launcher =
      cluster.Start(LaunchCommand(job, {"--device", "w1:cuda:99;*:cpu",
                                        "--stop-on-worker-failure", "--run-dir",
                                        run_dir, "--timeout-s", "60"}),
                    "launch");
  ASSERT_TRUE(launcher.ok());
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(90));
  ASSERT_TRUE(exit.ok());
  EXPECT_FALSE(exit->ok());
  const std::string out = cluster.Output("launch");
  EXPECT_NE(out.find("worker 1"), std::string::npos) << out;
  const std::string log = ReadFile(run_dir + "/logs/worker-1.log");
  EXPECT_NE(log.find("cuda:99"), std::string::npos) << log << out;
}

}  // namespace
}  // namespace lockstep
