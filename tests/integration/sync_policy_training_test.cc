// Every sync policy trains Fashion-MNIST across real processes with uneven
// emulated workers; a worker SIGKILLed mid-run is removed after the
// heartbeat timeout and no policy hangs. A replacement worker joins at the
// current clock. The coordinator serves /metrics while training.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <regex>

#include "tests/integration/test_cluster.h"
#include "tests/support/http_request.h"

namespace lockstep {
namespace {

constexpr int kPolicyClocks = 400;

JobConfig Job(const std::string& sync, int clocks) {
  JobConfig job;
  job.servers = 2;
  job.workers = 3;
  job.sync = sync;
  job.model = "softmax";
  job.batches = {32};
  job.max_clocks = clocks;
  job.train_limit = 6000;
  job.test_limit = 2000;
  job.eval_every = 0;
  job.lr = 0.1;
  job.heartbeat_ms = 100;
  return job;
}

// Emulated costs: worker 2 is three times slower per sample.
std::vector<std::string> Hetero(int rank) {
  return {"--hetero",
          rank == 2 ? "linear=0.0005+0.00006" : "linear=0.0005+0.00002"};
}

// Number of metrics.jsonl lines so far.
size_t Reported(const std::string& dir) {
  return ReadLines(dir + "/metrics.jsonl").size();
}

// Fetches http://HOST:PORT/metrics.
std::string Scrape(const std::string& url) {
  return HttpRequest(url, "GET /metrics HTTP/1.0\r\n\r\n");
}

class SyncPolicyTrainingTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SyncPolicyTrainingTest, TrainsAndSurvivesAKilledWorker) {
  const std::string dir = MakeTempDir("lockstep-policy");
  TestCluster cluster;
  ASSERT_TRUE(
      cluster
          .StartCoordinator(Job(GetParam(), kPolicyClocks), {"--run-dir", dir})
          .ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  std::vector<pid_t> pids;
  for (int w = 0; w < 3; ++w) {
    auto pid = cluster.Start(
        [&] {
          std::vector<std::string> argv = {BinaryPath("lockstep-worker"),
                                           "--coordinator", cluster.endpoint(),
                                           "--rank", std::to_string(w)};
          for (auto& a : Hetero(w)) argv.push_back(a);
          return argv;
        }(),
        "worker " + std::to_string(w));
    ASSERT_TRUE(pid.ok());
    pids.push_back(*pid);
  }
  // Kill worker 1 once training is under way.
  for (int i = 0; i < 600 && Reported(dir) < 150; ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  ASSERT_GE(Reported(dir), 150u) << cluster.Output("coordinator");
  std::string metrics_url;
  for (const auto& line : cluster.Lines("coordinator")) {
    if (line.rfind("@metrics ", 0) == 0) metrics_url = line.substr(9);
  }
  const std::string scraped = Scrape(metrics_url);
  EXPECT_NE(scraped.find("lockstep_samples_total"), std::string::npos)
      << metrics_url << "\n"
      << scraped;
  ASSERT_EQ(kill(pids[1], SIGKILL), 0);

  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok()) << GetParam() << " hung after a worker died\n"
                         << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(20)));
  for (const std::string name :
       {"server 0", "server 1", "worker 0", "worker 2"}) {
    EXPECT_TRUE(cluster.ExitOf(name).ok()) << name << "\n"
                                           << cluster.Output(name);
  }
  const std::string summary = ReadFile(dir + "/summary.json");
  std::cout << GetParam() << ": " << summary << "\n";
  EXPECT_EQ(JsonNumber(summary, "dead_workers"), 1) << summary;
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0.6) << summary;
  // Apply-on-arrival policies measure staleness: with three workers some
  // pushes must have seen other workers' updates since their pull.
  const bool on_arrival =
      GetParam().rfind("asp", 0) == 0 || GetParam().rfind("ssp", 0) == 0;
  double max_staleness = 0;
  for (const auto& line : ReadLines(dir + "/metrics.jsonl")) {
    max_staleness = std::max(max_staleness, JsonNumber(line, "staleness"));
  }
  if (on_arrival) {
    EXPECT_GT(max_staleness, 0) << "staleness never measured";
  } else {
    EXPECT_EQ(max_staleness, 0);
  }
}

// Backup workers: each clock commits the first N-B pushes, n samples each,
// and the late worker's push for a committed clock is dropped, not applied.
TEST(BackupWorkersTest, CommitsNMinusBPushesPerClockAndDropsTheLateOnes) {
  const std::string dir = MakeTempDir("lockstep-backup");
  constexpr int kClocks = 150;
  TestCluster cluster;
  ASSERT_TRUE(
      cluster.StartCoordinator(Job("backup:1", kClocks), {"--run-dir", dir})
          .ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  for (int w = 0; w < 3; ++w) {
    std::vector<std::string> argv = {BinaryPath("lockstep-worker"),
                                     "--coordinator", cluster.endpoint(),
                                     "--rank", std::to_string(w)};
    for (auto& a : Hetero(w)) argv.push_back(a);
    ASSERT_TRUE(cluster.Start(argv, "worker " + std::to_string(w)).ok());
  }
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(20)));
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), kClocks) << summary;
  // (N - B) * n = 2 * 32 samples committed per clock.
  EXPECT_EQ(JsonNumber(summary, "samples"), kClocks * 2 * 32) << summary;
  // Worker 2 is three times slower: its pushes come after their clock's
  // commit, or before it and are discarded by it; the run counts each one
  // the policy left out, either way.
  EXPECT_GT(JsonNumber(summary, "dropped_pushes"), 0) << summary;
  EXPECT_EQ(JsonNumber(summary, "dropped_pushes"),
            JsonNumber(summary, "lockstep_dropped_pushes_total"))
      << summary;
}

INSTANTIATE_TEST_SUITE_P(Policies, SyncPolicyTrainingTest,
                         ::testing::Values("bsp", "ssp:2", "asp",
                                           "asp:scale:drop=8", "backup:1",
                                           "lbbsp", "lbbsp:numerical"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) {
                               c = '_';
                             }
                           }
                           return name;
                         });

TEST(SyncPolicyRejoinTest, ReplacementWorkerJoinsAtTheCurrentClock) {
  const std::string dir = MakeTempDir("lockstep-rejoin");
  TestCluster cluster;
  ASSERT_TRUE(
      cluster.StartCoordinator(Job("bsp", kPolicyClocks), {"--run-dir", dir})
          .ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  std::vector<pid_t> pids;
  for (int w = 0; w < 3; ++w) {
    ASSERT_TRUE(cluster.StartWorker(w, Hetero(w)).ok());
  }
  for (int i = 0; i < 600 && Reported(dir) < 150; ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  pid_t victim = 0;
  for (pid_t pid : cluster.group().running_pids()) {
    const std::string cmd =
        ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmd.find("lockstep-worker") != std::string::npos &&
        cmd.find(std::string("--rank") + '\0' + "1") != std::string::npos) {
      victim = pid;
    }
  }
  ASSERT_NE(victim, 0);
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  // Wait until the coordinator removed it, then start a replacement.
  bool removed = false;
  for (int i = 0; i < 200 && !removed; ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
    for (const auto& line : cluster.Lines("coordinator")) {
      if (line.find("worker 1 removed") != std::string::npos) removed = true;
    }
  }
  ASSERT_TRUE(removed) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster
                  .Start({BinaryPath("lockstep-worker"), "--coordinator",
                          cluster.endpoint(), "--rank", "1", "--hetero",
                          "linear=0.0005+0.00002"},
                         "replacement")
                  .ok());
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(20)));
  EXPECT_TRUE(cluster.ExitOf("replacement").ok())
      << cluster.Output("replacement");
  // It started at the clock the job had reached, not at 0.
  int64_t joined_at = -1;
  const std::regex moved("moved from clock 0 to the current clock ([0-9]+)");
  for (const auto& line : cluster.Lines("replacement")) {
    std::smatch m;
    if (std::regex_search(line, m, moved)) joined_at = std::stoll(m[1]);
  }
  EXPECT_GT(joined_at, 50) << cluster.Output("replacement");
  bool joined_logged = false;
  for (const auto& line : cluster.Lines("coordinator")) {
    if (line.find("joined the running job") != std::string::npos) {
      joined_logged = true;
    }
  }
  EXPECT_TRUE(joined_logged);
  // The replacement's clocks count: it reported clocks after joining.
  size_t replacement_reports = 0;
  for (const auto& line : ReadLines(dir + "/metrics.jsonl")) {
    if (JsonNumber(line, "worker") == 1 &&
        JsonNumber(line, "clock") >= joined_at) {
      ++replacement_reports;
    }
  }
  EXPECT_GT(replacement_reports, 0u);
}

}  // namespace
}  // namespace lockstep
