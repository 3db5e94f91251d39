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
#include "tests/integration/test_cluster.h"
#include "tests/support/sst_flip.h"
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

// The uninterrupted job's final model.
std::vector<float> UninterruptedModel() {
  const std::string dir = MakeTempDir("lockstep-whole");
  TestCluster cluster;
  EXPECT_TRUE(cluster.StartCoordinator(RecoveryJob(dir)).ok());
  StartRoles(cluster, dir);
  auto model = RunToTheEnd(cluster, dir);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : std::vector<float>();
}

void ExpectSameModel(const std::vector<float>& got,
                     const std::vector<float>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &expected[i], sizeof(float)), 0)
        << "parameter " << i << ": " << got[i] << " vs " << expected[i];
  }
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
void FlipAByteOfTheNewestRound(const std::string& snapshots) {
  auto manifest = SnapshotManifest::Load(snapshots);
  ASSERT_TRUE(manifest.ok());
  const uint64_t newest = manifest->LatestComplete()->round;
  std::string chunk;
  {
    auto store = RocksDbStore::OpenReadOnly(snapshots + "/shard-0");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto read = (*store)->ReadChunk(newest, "dense_weights", 0);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    chunk = *read;
  }
  ASSERT_GE(chunk.size(), 64u);
  const std::string needle = chunk.substr(0, 64);
  const int flipped = FlipByteInSst(snapshots + "/shard-0", needle, 10);
  ASSERT_EQ(flipped, 1) << "the round's weights are in one SST file";
}

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

// A server SIGKILLed mid-training and started again by hand (as an
// orchestrator would): every shard rolls back to the newest complete round
// while the workers wait, the job continues at its clock + 1, and it ends
// with the uninterrupted job's model, byte for byte.
TEST(SnapshotRecoveryTest, AServerKilledAndRestartedRollsTheJobBackLive) {
  const std::vector<float> expected = UninterruptedModel();
  const std::string dir = MakeTempDir("lockstep-live");
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(RecoveryJob(dir)).ok());
  const std::vector<std::string> server1 = {BinaryPath("lockstep-server"),
                                            "--coordinator",
                                            cluster.endpoint(),
                                            "--rank",
                                            "1",
                                            "--listen",
                                            "tcp://127.0.0.1:0"};
  ASSERT_TRUE(cluster.StartServer(0).ok());
  auto victim = cluster.Start(server1, "server 1");
  ASSERT_TRUE(victim.ok());
  for (int w = 0; w < 3; ++w) {
    std::vector<std::string> extra = {"--hetero", "linear=0.005+0.0002"};
    if (w == 0) extra.insert(extra.end(), {"--dump-model", dir + "/model.bin"});
    ASSERT_TRUE(cluster.StartWorker(w, extra).ok());
  }
  for (int i = 0; i < 600; ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
    auto manifest = SnapshotManifest::Load(dir + "/snapshots");
    if (manifest.ok() && manifest->rounds().size() >= 2) break;
  }
  cluster.Pump(std::chrono::milliseconds(70));
  ASSERT_EQ(kill(*victim, SIGKILL), 0);
  // Dead for longer than the liveness limit (10 heartbeats of 100 ms):
  // the coordinator notices, rolls the survivors back and waits for it.
  for (int i = 0; i < 30; ++i) cluster.Pump(std::chrono::milliseconds(50));
  ASSERT_TRUE(cluster.Start(server1, "server 1 again").ok());
  auto model = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::string log = cluster.Output("coordinator");
  EXPECT_NE(log.find("rolling every shard back to snapshot round"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("recovered in"), std::string::npos) << log;
  ExpectSameModel(*model, expected);
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "recoveries"), 1) << summary;
}

// As above, but the newest round is damaged (a flipped byte in shard 0's
// part) after the kill: server 0 fails to restore it and exits, the round
// is marked failed, every shard rolls back to the round before, and the job
// still ends with the uninterrupted job's model.
TEST(SnapshotRecoveryTest, ADamagedRoundInALiveRecoveryFallsBackToTheOlder) {
  const std::vector<float> expected = UninterruptedModel();
  const std::string dir = MakeTempDir("lockstep-live-flip");
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(RecoveryJob(dir)).ok());
  auto server = [&](int rank) {
    return std::vector<std::string>{BinaryPath("lockstep-server"),
                                    "--coordinator",
                                    cluster.endpoint(),
                                    "--rank",
                                    std::to_string(rank),
                                    "--listen",
                                    "tcp://127.0.0.1:0"};
  };
  ASSERT_TRUE(cluster.Start(server(0), "server 0").ok());
  auto victim = cluster.Start(server(1), "server 1");
  ASSERT_TRUE(victim.ok());
  for (int w = 0; w < 3; ++w) {
    std::vector<std::string> extra = {"--hetero", "linear=0.005+0.0002"};
    if (w == 0) extra.insert(extra.end(), {"--dump-model", dir + "/model.bin"});
    ASSERT_TRUE(cluster.StartWorker(w, extra).ok());
  }
  for (int i = 0; i < 600; ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
    auto manifest = SnapshotManifest::Load(dir + "/snapshots");
    if (manifest.ok() && manifest->rounds().size() >= 2) break;
  }
  ASSERT_EQ(kill(*victim, SIGKILL), 0);
  // No round completes without server 1, and the survivor starts to
  // restore only once server 1 is declared dead (1 s).
  FlipAByteOfTheNewestRound(dir + "/snapshots");
  const uint64_t bad =
      SnapshotManifest::Load(dir + "/snapshots")->LatestComplete()->round;
  auto failed = cluster.WaitFor("server 0", std::chrono::seconds(30));
  ASSERT_TRUE(failed.ok() && !failed->ok()) << cluster.Output("server 0");
  ASSERT_TRUE(cluster.Start(server(0), "server 0 again").ok());
  ASSERT_TRUE(cluster.Start(server(1), "server 1 again").ok());
  auto model = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::string log = cluster.Output("coordinator");
  EXPECT_NE(
      log.find("snapshot round " + std::to_string(bad) + " cannot be restored"),
      std::string::npos)
      << log;
  EXPECT_NE(log.find("it is marked failed; rolling every shard back"),
            std::string::npos)
      << log;
  ExpectSameModel(*model, expected);
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
