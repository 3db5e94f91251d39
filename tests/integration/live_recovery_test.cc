// Live recovery with real processes and the deterministic BSP job of
// recovery_job.h: a server SIGKILLed mid-training and started again by hand
// (as an orchestrator would) makes every shard roll back to the newest
// complete round while the workers wait; the job continues at its clock + 1
// and ends with the uninterrupted job's model, byte for byte. Also when the
// newest round turns out damaged, and when the server dies while its part
// of a round is still being written.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include "server/store/rocksdb_store.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tests/integration/recovery_job.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

// Starts the recovery job with each server under its own name ("server K",
// pid in pids[K]) and waits until `rounds` rounds are in the manifest.
void StartLiveJob(TestCluster& cluster, const std::string& dir, size_t rounds,
                  std::vector<pid_t>* pids) {
  ASSERT_TRUE(
      cluster.StartCoordinator(RecoveryJob(dir), {"--run-dir", dir}).ok());
  for (int s = 0; s < 2; ++s) {
    auto pid =
        cluster.Start(ServerArgv(cluster, s), "server " + std::to_string(s));
    ASSERT_TRUE(pid.ok());
    pids->push_back(*pid);
  }
  StartWorkers(cluster, dir);
  for (int i = 0; i < 600; ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
    auto manifest = SnapshotManifest::Load(dir + "/snapshots");
    if (manifest.ok() && manifest->rounds().size() >= rounds) break;
  }
}

TEST(LiveRecoveryTest, AServerKilledAndRestartedRollsTheJobBackLive) {
  const std::vector<float> expected = UninterruptedModel();
  const std::string dir = MakeTempDir("lockstep-live");
  TestCluster cluster;
  std::vector<pid_t> pids;
  StartLiveJob(cluster, dir, 2, &pids);
  cluster.Pump(std::chrono::milliseconds(70));
  ASSERT_EQ(kill(pids[1], SIGKILL), 0);
  // Dead for longer than the liveness limit (10 heartbeats of 100 ms):
  // the coordinator notices, rolls the survivors back and waits for it.
  for (int i = 0; i < 30; ++i) cluster.Pump(std::chrono::milliseconds(50));
  ASSERT_TRUE(cluster.Start(ServerArgv(cluster, 1), "server 1 again").ok());
  auto model = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_TRUE(cluster.Printed("coordinator",
                              "rolling every shard back to snapshot round"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator", "recovered in"));
  ExpectSameModel(*model, expected);
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "recoveries"), 1) << summary;
}

// A killed server that nobody starts again: once the recovery outlives the
// registration timeout the job ends, and the coordinator tells every role
// why rather than leaving them to find it silent.
TEST(LiveRecoveryTest, AServerThatNeverComesBackEndsTheJobAndTheRolesHearWhy) {
  const std::string dir = MakeTempDir("lockstep-live-lost");
  TestCluster cluster;
  ASSERT_TRUE(
      cluster
          .StartCoordinator(RecoveryJob(dir),
                            {"--run-dir", dir, "--register-timeout-s", "3"})
          .ok());
  std::vector<pid_t> pids;
  for (int s = 0; s < 2; ++s) {
    auto pid =
        cluster.Start(ServerArgv(cluster, s), "server " + std::to_string(s));
    ASSERT_TRUE(pid.ok());
    pids.push_back(*pid);
  }
  StartWorkers(cluster, dir);
  for (int i = 0; i < 600 && !cluster.Printed("coordinator", "complete"); ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(kill(pids[1], SIGKILL), 0);
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(60));
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_FALSE(exit->ok());
  EXPECT_TRUE(cluster.Printed("coordinator", "recovery did not finish"))
      << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(30)));
  EXPECT_TRUE(cluster.Printed("server 0", "job aborted: recovery did not"))
      << cluster.Output("server 0");
}

// As above, but the newest round is damaged (a flipped byte in shard 0's
// part) after the kill: server 0 fails to restore it and waits, serving
// nothing, the round is marked failed, every shard rolls back to the round
// before, and the job still ends with the uninterrupted job's model, with
// server 0 the same process throughout.
TEST(LiveRecoveryTest, ADamagedRoundInALiveRecoveryFallsBackToTheOlder) {
  const std::vector<float> expected = UninterruptedModel();
  const std::string dir = MakeTempDir("lockstep-live-flip");
  TestCluster cluster;
  std::vector<pid_t> pids;
  StartLiveJob(cluster, dir, 2, &pids);
  ASSERT_EQ(kill(pids[1], SIGKILL), 0);
  // No round completes without server 1, and the survivor starts to
  // restore only once server 1 is declared dead (1 s).
  FlipAByteOfTheNewestRound(dir + "/snapshots");
  const uint64_t bad =
      SnapshotManifest::Load(dir + "/snapshots")->LatestComplete()->round;
  ASSERT_TRUE(cluster.Start(ServerArgv(cluster, 1), "server 1 again").ok());
  auto model = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(cluster.Pid("server 0"), pids[0]);
  EXPECT_TRUE(cluster.Printed("server 0",
                              "the coordinator rolls back to the "
                              "round before it"))
      << cluster.Output("server 0");
  EXPECT_TRUE(cluster.Printed(
      "coordinator",
      "snapshot round " + std::to_string(bad) + " cannot be restored"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator",
                              "it is marked failed; rolling every shard back"));
  ExpectSameModel(*model, expected);
}

// Server 1 writes each of its parts of a round 1.5 s late (the fault hook
// LOCKSTEP_FAULT_ROUND_DELAY_MS), so a round is in flight most of the time.
// Killed once shard 0 holds its part of a round that shard 1 never
// finished: that round is recorded failed and never used; the job rolls
// back to the complete round before it and still ends with the same model.
TEST(LiveRecoveryTest, AServerKilledWhileWritingItsRoundUsesTheOneBefore) {
  const std::vector<float> expected = UninterruptedModel();
  const std::string dir = MakeTempDir("lockstep-live-inflight");
  TestCluster cluster;
  std::vector<pid_t> pids;
  ASSERT_TRUE(
      cluster.StartCoordinator(RecoveryJob(dir), {"--run-dir", dir}).ok());
  auto server0 = cluster.Start(ServerArgv(cluster, 0), "server 0");
  ASSERT_TRUE(server0.ok());
  setenv("LOCKSTEP_FAULT_ROUND_DELAY_MS", "1500", 1);
  auto server1 = cluster.Start(ServerArgv(cluster, 1), "server 1");
  unsetenv("LOCKSTEP_FAULT_ROUND_DELAY_MS");
  ASSERT_TRUE(server1.ok());
  StartWorkers(cluster, dir);
  // Until a round is complete and shard 0 holds a newer one.
  uint64_t complete = 0;
  uint64_t half_written = 0;
  for (int i = 0; i < 600 && half_written == 0; ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
    auto manifest = SnapshotManifest::Load(dir + "/snapshots");
    if (!manifest.ok() || manifest->LatestComplete() == nullptr) continue;
    complete = manifest->LatestComplete()->round;
    auto store = RocksDbStore::OpenReadOnly(dir + "/snapshots/shard-0");
    if (!store.ok()) continue;
    const StatusOr<std::vector<uint64_t>> rounds = (*store)->ListRounds();
    if (!rounds.ok()) continue;
    for (uint64_t r : *rounds) {
      if (r > complete) half_written = r;
    }
  }
  ASSERT_GT(half_written, 0u) << cluster.Output("coordinator");
  ASSERT_EQ(kill(*server1, SIGKILL), 0);
  ASSERT_TRUE(cluster.Start(ServerArgv(cluster, 1), "server 1 again").ok());
  auto model = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_TRUE(cluster.Printed(
      "coordinator",
      "snapshot round " + std::to_string(half_written) + " (clock"));
  EXPECT_TRUE(cluster.Printed("coordinator",
                              "failed; older rounds stay: server 1 was lost"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator",
                              "rolling every shard back to snapshot round " +
                                  std::to_string(complete) + " "))
      << cluster.Output("coordinator");
  ExpectSameModel(*model, expected);
}

}  // namespace
}  // namespace lockstep
