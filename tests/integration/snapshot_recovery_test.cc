// Crash and resume with real processes: a BSP job whose every process is
// SIGKILLed mid-training (rounds being written, pushes in flight) and then
// resumed from its newest complete round ends with the same model, byte
// for byte, as the job run without interruption.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "common/coordinator_watch.h"
#include "server/store/rocksdb_store.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tests/integration/recovery_job.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/launch_args.h"
#include "tests/support/sst_flip.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

// Runs the job in `dir` until two snapshot rounds are complete and a few
// clocks more, then SIGKILLs every process of it. Returns the clock of the
// newest complete round, or -1 (with a test failure).
int64_t KillMidTraining(const std::string& dir,
                        const std::string& data_order = "global") {
  int64_t killed_after = -1;
  TestCluster cluster;
  EXPECT_TRUE(
      cluster.StartCoordinator(RecoveryJob(dir, data_order), {"--run-dir", dir})
          .ok());
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

// Under both data orders: a worker's own partition stream continues at the
// resumed clock too.
class KilledJobTest : public ::testing::TestWithParam<std::string> {};

TEST_P(KilledJobTest, EveryProcessKilledThenResumedEndsWithTheSameModel) {
  const std::string data_order = GetParam();
  const std::vector<float> expected = UninterruptedModel(data_order);
  ASSERT_FALSE(expected.empty());
  const std::string dir = MakeTempDir("lockstep-killed");
  const int64_t killed_after = KillMidTraining(dir, data_order);
  ASSERT_GE(killed_after, 0);
  TestCluster cluster;
  ASSERT_TRUE(cluster
                  .StartCoordinator(RecoveryJob(dir, data_order),
                                    {"--run-dir", dir, "--resume"})
                  .ok());
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

INSTANTIATE_TEST_SUITE_P(DataOrders, KilledJobTest,
                         ::testing::Values("global", "partition"));

// Roles with a re-attach window outlive their coordinator: a new one
// started by hand at the same endpoint with --resume adopts the servers'
// newest commit (BSP), so nothing is computed again, and the job ends with
// the same model, byte for byte, as one that was never interrupted.
TEST(CoordinatorFailoverTest, AdoptedCommitsEndWithTheUninterruptedModel) {
  const std::vector<float> expected = UninterruptedModel("global");
  ASSERT_FALSE(expected.empty());
  const std::string dir = MakeTempDir("lockstep-failover");
  // Every role this test starts inherits it (the launcher sets the same).
  setenv(kReattachEnv, "60", 1);
  TestCluster cluster;
  const JobConfig job = RecoveryJob(dir, "global");
  ASSERT_TRUE(cluster.StartCoordinator(job, {"--run-dir", dir}).ok());
  StartRoles(cluster, dir);
  ASSERT_TRUE(PumpUntilARoundCompletes(cluster, dir, 60));
  ReplaceTheCoordinator(cluster, job, dir);
  auto exit = cluster.WaitFor("coordinator again", std::chrono::seconds(120));
  unsetenv(kReattachEnv);
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator again");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(30)));
  for (const std::string role : {"server 0", "server 1", "worker 0"}) {
    EXPECT_TRUE(cluster.ExitOf(role).ok()) << cluster.Output(role);
    EXPECT_TRUE(cluster.Printed(role, "re-attached to the coordinator"))
        << cluster.Output(role);
  }
  // Adopted, unless the kill fell between the shards' commits of one
  // clock (then the job resumed from the round): the same model either way.
  const bool adopted = cluster.Printed(
      "coordinator again", "adopting the live servers' state at clock");
  EXPECT_NE(adopted, cluster.Printed("server 0", "rolling back"))
      << cluster.Output("server 0");
  std::cout << (adopted ? "adopted the servers' commit"
                        : "resumed from the round")
            << "\n";
  auto got = ReadModelFile(dir + "/model.bin");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectSameModel(*got, expected);
}

// Flips one byte of shard 0's weights in the newest complete round, found
// by their bytes in the store's SST files: the one resume marks that round
// failed, rolls every shard back to the round before and, with the same
// processes, trains to the uninterrupted job's model.
TEST(SnapshotRecoveryTest,
     AFlippedByteFailsItsRoundAndTheSameResumeUsesTheOlder) {
  const std::vector<float> expected = UninterruptedModel();
  ASSERT_FALSE(expected.empty());
  const std::string dir = MakeTempDir("lockstep-flipped");
  ASSERT_GE(KillMidTraining(dir), 0);
  FlipAByteOfTheNewestRound(dir + "/snapshots");
  auto before = SnapshotManifest::Load(dir + "/snapshots");
  ASSERT_TRUE(before.ok());
  const uint64_t bad = before->LatestComplete()->round;
  int64_t older_clock = -1;  // the round the resume falls back to
  for (const ManifestRound& r : before->rounds()) {
    if (r.complete && r.round < bad) older_clock = r.clock;
  }
  ASSERT_GE(older_clock, 0);
  const JobConfig job = RecoveryJob(dir);
  TestCluster cluster;
  ASSERT_TRUE(
      cluster.StartCoordinator(job, {"--run-dir", dir, "--resume"}).ok());
  StartRoles(cluster, dir);
  auto got = RunToTheEnd(cluster, dir);
  ASSERT_TRUE(got.ok()) << got.status().ToString()
                        << cluster.Output("coordinator");
  ExpectSameModel(*got, expected);
  const std::string log = cluster.Output("coordinator");
  EXPECT_NE(
      log.find("snapshot round " + std::to_string(bad) + " cannot be restored"),
      std::string::npos)
      << log;
  EXPECT_NE(log.find("checksum"), std::string::npos) << log;
  EXPECT_NE(log.find("it is marked failed"), std::string::npos) << log;
  // The server that met the damage waited for the older round's welcome,
  // and served to the end.
  EXPECT_TRUE(cluster.Printed("server 0",
                              "the coordinator rolls back to "
                              "the round before it"))
      << cluster.Output("server 0");
  EXPECT_TRUE(cluster.ExitOf("server 0").ok()) << cluster.Output("server 0");
  // The run counts on from the round it used, not the damaged one: its
  // samples are every clock's once, and metrics.jsonl holds each worker's
  // clock once (the killed timeline's later lines moved aside).
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "resumed_from_clock"), older_clock) << summary;
  EXPECT_EQ(JsonNumber(summary, "samples"),
            kRecoveryClocks * JsonNumber(summary, "global_batch"))
      << summary;
  std::set<std::pair<int, int>> seen;
  for (const std::string& line : ReadLines(dir + "/metrics.jsonl")) {
    const auto key =
        std::make_pair(static_cast<int>(JsonNumber(line, "worker")),
                       static_cast<int>(JsonNumber(line, "clock")));
    EXPECT_TRUE(seen.insert(key).second)
        << "worker " << key.first << " clock " << key.second << " twice";
  }
  EXPECT_FALSE(ReadLines(dir + "/undone-metrics.jsonl").empty());
}

TEST(SnapshotRecoveryTest, LauncherResumesARunDirectoryWithMoreWorkers) {
  const std::string run_dir = MakeTempDir("lockstep-resume") + "/run";
  auto launch = [](const std::vector<std::string>& flags) {
    const LauncherRun run = RunLauncher(flags);
    EXPECT_TRUE(run.exit.ok()) << run.output;
  };
  JobConfig job;
  job.servers = 2;
  job.workers = 2;
  job.model = "softmax";
  job.data = "synthetic:samples=2000:test=400:dim=12:classes=3";
  job.max_clocks = 40;
  job.eval_every = 0;
  // No snapshot_dir: snapshots go to RUN_DIR/snapshots by default.
  job.snapshot_every_clocks = 20;
  launch(LaunchArgs(job, {"--run-dir", run_dir}));
  auto manifest = SnapshotManifest::Load(run_dir + "/snapshots");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_NE(manifest->LatestComplete(), nullptr);
  EXPECT_EQ(manifest->LatestComplete()->clock, 39);

  // The same job, longer and on 3 workers and 3 servers, from clock 40.
  // Typed by hand: with --resume the launcher applies only the job flags
  // given over the snapshot's job, so these are the changes, not a job.
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

// A 40-clock job of 3 uneven workers (per-sample costs 1 : 3 : 6) under
// `sync`, rounds every 20 clocks into `snapshots`, metrics into `run_dir`.
void RunUnevenJob(const std::string& sync, const std::string& snapshots,
                  const std::string& run_dir,
                  const std::vector<std::string>& more = {}) {
  std::filesystem::create_directories(run_dir);
  JobConfig job;
  job.servers = 2;
  job.workers = 3;
  job.model = "softmax";
  job.data = "synthetic:samples=3000:test=300:dim=12:classes=3";
  job.batches = {16};
  job.sync = sync;
  job.max_clocks = 40;
  job.eval_every = 0;
  job.heartbeat_ms = 100;
  job.snapshot_every_clocks = 20;
  job.snapshot_dir = snapshots;
  std::vector<std::string> extra = {"--run-dir", run_dir};
  extra.insert(extra.end(), more.begin(), more.end());
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(job, extra).ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  for (int w = 0; w < 3; ++w) {
    const std::string cost = std::to_string(0.0001 * (w == 0 ? 1 : 3 * w));
    ASSERT_TRUE(
        cluster.StartWorker(w, {"--hetero", "linear=0.002+" + cost}).ok());
  }
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(30)));
}

// The round `round` of the manifest in `snapshots`, complete.
ManifestRound CompleteRound(const std::string& snapshots, uint64_t round) {
  auto manifest = SnapshotManifest::Load(snapshots);
  EXPECT_TRUE(manifest.ok()) << manifest.status().ToString();
  const ManifestRound* found = manifest.ok() ? manifest->Find(round) : nullptr;
  EXPECT_TRUE(found != nullptr && found->complete);
  return found != nullptr ? *found : ManifestRound{};
}

// Per worker, the first number of the state entry "<name>/<worker>".
std::map<int, double> PerWorker(const ManifestRound& round,
                                const std::string& name) {
  std::map<int, double> out;
  for (int w = 0; w < 3; ++w) {
    auto it = round.policy_state.find(name + "/" + std::to_string(w));
    if (it != round.policy_state.end()) out[w] = it->second.at(0);
  }
  return out;
}

// LB-BSP's learned quotas and predictors travel in the round: a job
// resumed from the round at clock 19 gives its workers, at clock 20, the
// quotas the uninterrupted job gave them, not a fresh equal split.
TEST(SnapshotRecoveryTest, AResumedLbBspJobKeepsTheQuotasItHadLearned) {
  const std::string dir = MakeTempDir("lockstep-lbbsp-state");
  RunUnevenJob("lbbsp", dir + "/snapshots", dir + "/whole");
  const ManifestRound round = CompleteRound(dir + "/snapshots", 1);
  ASSERT_EQ(round.clock, 19);
  EXPECT_EQ(round.policy, "lbbsp:analytical:narx");
  const std::map<int, double> saved = PerWorker(round, "quota");
  ASSERT_EQ(saved.size(), 3u);
  EXPECT_EQ(saved.at(0) + saved.at(1) + saved.at(2), 48);
  EXPECT_GT(saved.at(0), saved.at(2) + 8) << "the quotas learned the speeds";
  auto batch_at_20 = [](const std::string& run_dir) {
    std::map<int, double> out;
    for (const auto& [w, clocks] : ReportedClocks(run_dir)) {
      if (clocks.count(20) != 0) out[w] = clocks.at(20);
    }
    return out;
  };
  EXPECT_EQ(batch_at_20(dir + "/whole"), saved);

  RunUnevenJob("lbbsp", dir + "/snapshots", dir + "/resumed",
               {"--resume", "--resume-round", "1"});
  EXPECT_EQ(batch_at_20(dir + "/resumed"), saved);
}

// Under SSP a round is a cut in which the fast worker is clocks ahead: the
// round's clock table says where each worker was, and a resumed worker
// starts there (not at the slowest worker's clock, which would run the
// fast one's clocks twice).
TEST(SnapshotRecoveryTest, AResumedSspWorkerStartsWhereItWas) {
  const std::string dir = MakeTempDir("lockstep-ssp-state");
  RunUnevenJob("ssp:3", dir + "/snapshots", dir + "/whole");
  const ManifestRound round = CompleteRound(dir + "/snapshots", 1);
  EXPECT_EQ(round.policy, "ssp:3");
  const std::map<int, double> completed = PerWorker(round, "completed");
  ASSERT_EQ(completed.size(), 3u);
  for (const auto& [w, clocks] : completed) {
    EXPECT_GE(clocks, round.clock + 1) << w;
  }
  // Worker 0 is 6x faster than worker 2: SSP let it run ahead.
  EXPECT_GT(completed.at(0), completed.at(2));
  RunUnevenJob("ssp:3", dir + "/snapshots", dir + "/resumed",
               {"--resume", "--resume-round", "1"});
  const auto resumed = ReportedClocks(dir + "/resumed");
  for (const auto& [w, clocks] : completed) {
    ASSERT_EQ(resumed.count(w), 1u) << w;
    EXPECT_EQ(static_cast<double>(resumed.at(w).begin()->first), clocks)
        << "worker " << w << "'s first clock after the resume";
  }
}

}  // namespace
}  // namespace lockstep
