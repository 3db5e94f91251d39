// Crash and resume with real processes: a BSP job whose every process is
// SIGKILLed mid-training (rounds being written, pushes in flight) and then
// resumed from its newest complete round ends with the same model, byte
// for byte, as the job run without interruption.
#include <gtest/gtest.h>
#include <signal.h>

#include "server/coordinator/snapshot_manifest.h"
#include "tests/integration/test_cluster.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

constexpr int kRecoveryClocks = 150;

std::vector<std::string> RecoveryJob(const std::string& dir) {
  return {"--servers",
          "2",
          "--workers",
          "3",
          "--model",
          "mlp:16",
          "--data",
          "synthetic:samples=3000:test=500:dim=20:classes=4",
          "--batch",
          "8,16,24",
          "--optimizer",
          "adam",
          "--lr",
          "0.005",
          "--clocks",
          std::to_string(kRecoveryClocks),
          "--eval-every",
          "0",
          "--heartbeat-ms",
          "100",
          "--data-order",
          "global",
          "--snapshot-every-clocks",
          "10",
          "--snapshot-dir",
          dir + "/snapshots",
          "--run-dir",
          dir};
}

// Starts the job's servers and workers; worker 0 (the final evaluator)
// dumps the final model; every worker takes 7-10 ms per clock, so the job
// runs for a few seconds.
void StartRoles(TestCluster& cluster, const std::string& dir) {
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  for (int w = 0; w < 3; ++w) {
    std::vector<std::string> extra = {"--hetero", "linear=0.005+0.0002"};
    if (w == 0) extra.insert(extra.end(), {"--dump-model", dir + "/model.bin"});
    ASSERT_TRUE(cluster.StartWorker(w, extra).ok());
  }
}

StatusOr<std::vector<float>> RunToTheEnd(TestCluster& cluster,
                                         const std::string& dir) {
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
  if (!exit.ok() || !exit->ok()) {
    return Internal("coordinator: " + cluster.Output("coordinator"));
  }
  if (!cluster.WaitAll(std::chrono::seconds(30))) {
    return Internal("roles did not exit after the job");
  }
  return ReadModelFile(dir + "/model.bin");
}

TEST(SnapshotRecoveryTest, EveryProcessKilledThenResumedEndsWithTheSameModel) {
  const std::string whole_dir = MakeTempDir("lockstep-whole");
  std::vector<float> expected;
  {
    TestCluster cluster;
    ASSERT_TRUE(cluster.StartCoordinator(RecoveryJob(whole_dir)).ok());
    StartRoles(cluster, whole_dir);
    auto model = RunToTheEnd(cluster, whole_dir);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    expected = std::move(model).value();
  }

  const std::string dir = MakeTempDir("lockstep-killed");
  int64_t killed_after = -1;
  {
    TestCluster cluster;
    ASSERT_TRUE(cluster.StartCoordinator(RecoveryJob(dir)).ok());
    StartRoles(cluster, dir);
    // Until two rounds are complete, then a few clocks more, so the kill
    // lands between rounds or during one.
    for (int i = 0; i < 600; ++i) {
      cluster.Pump(std::chrono::milliseconds(50));
      auto manifest = SnapshotManifest::Load(dir + "/snapshots");
      if (manifest.ok() && manifest->rounds().size() >= 2) {
        killed_after = manifest->LatestComplete()->clock;
        break;
      }
    }
    ASSERT_GE(killed_after, 0) << cluster.Output("coordinator");
    cluster.Pump(std::chrono::milliseconds(70));
    for (pid_t pid : cluster.group().running_pids()) kill(pid, SIGKILL);
    ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
    ASSERT_FALSE(cluster.ExitOf("coordinator").ok());
  }
  ASSERT_LT(killed_after, kRecoveryClocks - 1) << "the job ended first";

  TestCluster cluster;
  std::vector<std::string> resume = RecoveryJob(dir);
  resume.push_back("--resume");
  ASSERT_TRUE(cluster.StartCoordinator(resume).ok());
  StartRoles(cluster, dir);
  auto got = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  bool resumed = false;
  for (const std::string& line : cluster.Lines("coordinator")) {
    resumed |= line.find("resuming from snapshot round") != std::string::npos;
  }
  EXPECT_TRUE(resumed) << cluster.Output("coordinator");
  std::cout << "killed after round of clock " << killed_after << "\n";
  ASSERT_EQ(got->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(std::memcmp(&(*got)[i], &expected[i], sizeof(float)), 0)
        << "parameter " << i << ": " << (*got)[i] << " vs " << expected[i];
  }
}

TEST(SnapshotRecoveryTest, LauncherResumesARunDirectoryWithMoreWorkers) {
  const std::string run_dir = MakeTempDir("lockstep-resume") + "/run";
  auto launch = [&](const std::vector<std::string>& flags) {
    TestCluster cluster;
    std::vector<std::string> argv = {BinaryPath("lockstep-launch"),
                                     "--timeout-s", "120"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    EXPECT_TRUE(cluster.Start(argv, "launch").ok());
    auto exit = cluster.WaitFor("launch", std::chrono::seconds(150));
    EXPECT_TRUE(exit.ok() && exit->ok()) << cluster.Output("launch");
    EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  };
  // Snapshots go to RUN_DIR/snapshots by default.
  launch({"--servers", "2", "--workers", "2", "--model", "softmax", "--data",
          "synthetic:samples=2000:test=400:dim=12:classes=3", "--clocks", "40",
          "--eval-every", "0", "--snapshot-every-clocks", "20", "--run-dir",
          run_dir});
  auto manifest = SnapshotManifest::Load(run_dir + "/snapshots");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_NE(manifest->LatestComplete(), nullptr);
  EXPECT_EQ(manifest->LatestComplete()->clock, 39);

  // The same job, longer and on 3 workers and 3 servers, from clock 40.
  launch({"--resume", run_dir, "--clocks", "70", "--workers", "3", "--servers",
          "3"});
  const std::string summary = ReadFile(run_dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), 70) << summary;
  EXPECT_EQ(JsonNumber(summary, "workers"), 3) << summary;
  EXPECT_FALSE(ReadFile(run_dir + "/config-resumed.json").empty());
  const std::string log = ReadFile(run_dir + "/logs/coordinator.log");
  EXPECT_NE(log.find("resuming from snapshot round 2 at clock 40"),
            std::string::npos)
      << log;
  manifest = SnapshotManifest::Load(run_dir + "/snapshots");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->LatestComplete()->clock, 69);
  EXPECT_EQ(manifest->LatestComplete()->shards, 3u);
  EXPECT_EQ(manifest->job().workers, 3u);
}

}  // namespace
}  // namespace lockstep
