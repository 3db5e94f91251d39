// Crash and resume with real processes: a BSP job whose every process is
// SIGKILLed mid-training (rounds being written, pushes in flight) and then
// resumed from its newest complete round ends with the same model, byte
// for byte, as the job run without interruption.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "server/coordinator/snapshot_manifest.h"
#include "server/store/rocksdb_store.h"
#include "tests/integration/recovery_job.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/sst_flip.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

// Runs the job in `dir` until two snapshot rounds are complete and a few
// clocks more, then SIGKILLs every process of it. Returns the clock of the
// newest complete round, or -1 (with a test failure).
int64_t KillMidTraining(const std::string& dir) {
  int64_t killed_after = -1;
  TestCluster cluster;
  EXPECT_TRUE(cluster.StartCoordinator(RecoveryJob(dir)).ok());
  StartRoles(cluster, dir);
  for (int i = 0; i < 600; ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
    auto manifest = SnapshotManifest::Load(dir + "/snapshots");
    if (manifest.ok() && manifest->rounds().size() >= 2) {
      killed_after = manifest->LatestComplete()->clock;
      break;
    }
  }
  EXPECT_GE(killed_after, 0) << cluster.Output("coordinator");
  cluster.Pump(std::chrono::milliseconds(70));
  for (pid_t pid : cluster.group().running_pids()) kill(pid, SIGKILL);
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  EXPECT_FALSE(cluster.ExitOf("coordinator").ok());
  EXPECT_LT(killed_after, kRecoveryClocks - 1) << "the job ended first";
  return killed_after;
}

TEST(SnapshotRecoveryTest, EveryProcessKilledThenResumedEndsWithTheSameModel) {
  const std::vector<float> expected = UninterruptedModel();
  ASSERT_FALSE(expected.empty());
  const std::string dir = MakeTempDir("lockstep-killed");
  const int64_t killed_after = KillMidTraining(dir);
  ASSERT_GE(killed_after, 0);
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
  ExpectSameModel(*got, expected);
}

// Flips one byte of shard 0's weights in the newest complete round, found
// by their bytes in the store's SST files.
TEST(SnapshotRecoveryTest, AFlippedByteFailsItsRoundAndTheOlderOneIsUsed) {
  const std::vector<float> expected = UninterruptedModel();
  ASSERT_FALSE(expected.empty());
  const std::string dir = MakeTempDir("lockstep-flipped");
  ASSERT_GE(KillMidTraining(dir), 0);
  FlipAByteOfTheNewestRound(dir + "/snapshots");
  const uint64_t bad =
      SnapshotManifest::Load(dir + "/snapshots")->LatestComplete()->round;
  std::vector<std::string> resume = RecoveryJob(dir);
  resume.push_back("--resume");
  {
    TestCluster cluster;
    ASSERT_TRUE(cluster.StartCoordinator(resume).ok());
    StartRoles(cluster, dir);
    auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(60));
    ASSERT_TRUE(exit.ok());
    EXPECT_FALSE(exit->ok());
    const std::string log = cluster.Output("coordinator");
    EXPECT_NE(log.find("snapshot round " + std::to_string(bad) +
                       " cannot be restored"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("checksum"), std::string::npos) << log;
    EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(30)));
  }
  auto manifest = SnapshotManifest::Load(dir + "/snapshots");
  ASSERT_TRUE(manifest.ok());
  EXPECT_FALSE(manifest->Find(bad)->complete);
  EXPECT_NE(manifest->Find(bad)->error.find("restore on shard "),
            std::string::npos);
  ASSERT_NE(manifest->LatestComplete(), nullptr);
  EXPECT_LT(manifest->LatestComplete()->round, bad);

  // Resumed again: from the round before, to the same end.
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(resume).ok());
  StartRoles(cluster, dir);
  auto got = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectSameModel(*got, expected);
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
