#include "tests/integration/recovery_job.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <bit>
#include <cstring>

#include "server/store/rocksdb_store.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tests/support/launch_args.h"
#include "tests/support/sst_flip.h"
#include "worker/worker_runtime.h"

namespace lockstep {

JobConfig RecoveryJob(const std::string& dir, const std::string& data_order) {
  JobConfig job;
  job.servers = 2;
  job.workers = 3;
  job.model = "mlp:16";
  job.data = "synthetic:samples=3000:test=500:dim=20:classes=4";
  job.batches = {8, 16, 24};
  job.optimizer = "adam";
  job.lr = 0.005;
  job.max_clocks = kRecoveryClocks;
  job.eval_every = 0;
  job.heartbeat_ms = 100;
  job.data_order = data_order;
  job.snapshot_every_clocks = 10;
  job.snapshot_dir = dir + "/snapshots";
  return job;
}

// Starts the job's servers and workers (the evaluator StartCoordinator
// started dumps the final model); every worker takes 7-10 ms per clock, so
// the job runs for a few seconds.
void StartRoles(TestCluster& cluster, const std::string& dir, bool uneven) {
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  StartWorkers(cluster, dir, uneven);
}

void StartWorkers(TestCluster& cluster, const std::string& /*dir*/,
                  bool uneven) {
  for (int w = 0; w < 3; ++w) {
    const std::string profile =
        uneven ? "linear=0.003+" + std::to_string(0.0001 * (1 << w)) +
                     ",machine=node-" + std::to_string(w)
               : "linear=0.005+0.0002";
    ASSERT_TRUE(cluster.StartWorker(w, {"--hetero", profile}).ok());
  }
}

std::vector<std::string> ServerArgv(const TestCluster& cluster, int rank) {
  return {BinaryPath("lockstep-server"),
          "--coordinator",
          cluster.endpoint(),
          "--rank",
          std::to_string(rank),
          "--listen",
          "tcp://127.0.0.1:0"};
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

// The uninterrupted job's final model.
std::vector<float> UninterruptedModel(const std::string& data_order,
                                      const std::string& sync, bool uneven,
                                      std::string* run_dir) {
  const std::string dir = MakeTempDir("lockstep-whole");
  if (run_dir != nullptr) *run_dir = dir;
  JobConfig job = RecoveryJob(dir, data_order);
  job.sync = sync;
  TestCluster cluster;
  EXPECT_TRUE(cluster.StartCoordinator(job, {"--run-dir", dir}).ok());
  StartRoles(cluster, dir, uneven);
  auto model = RunToTheEnd(cluster, dir);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : std::vector<float>();
}

std::map<int, std::map<int64_t, double>> ReportedClocks(
    const std::string& run_dir) {
  std::map<int, std::map<int64_t, double>> out;
  for (const std::string& line : ReadLines(run_dir + "/metrics.jsonl")) {
    if (line.find("\"batch\"") == std::string::npos) continue;
    out[static_cast<int>(JsonNumber(line, "worker"))]
       [static_cast<int64_t>(JsonNumber(line, "clock"))] =
           JsonNumber(line, "batch");
  }
  return out;
}

void ReplaceTheCoordinator(TestCluster& cluster, const JobConfig& job,
                           const std::string& dir) {
  cluster.Pump(std::chrono::milliseconds(150));  // commits past the round
  const pid_t coordinator = RunningPidOf(cluster, "lockstep-coordinator");
  ASSERT_GT(coordinator, 0);
  ASSERT_EQ(kill(coordinator, SIGKILL), 0);
  cluster.Pump(std::chrono::milliseconds(300));
  std::vector<std::string> argv = {BinaryPath("lockstep-coordinator"),
                                   "--listen", cluster.endpoint()};
  for (std::string& flag : LaunchArgs(job, {"--run-dir", dir, "--resume"})) {
    argv.push_back(std::move(flag));
  }
  ASSERT_TRUE(cluster.Start(argv, "coordinator again").ok());
}

void ExpectSameModel(const std::vector<float>& got,
                     const std::vector<float>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]),
              std::bit_cast<uint32_t>(expected[i]))
        << "parameter " << i << ": " << got[i] << " vs " << expected[i];
  }
}

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

JobConfig SupervisedJobConfig() {
  JobConfig job;
  job.servers = 2;
  job.model = "softmax";
  job.batches = {32};
  job.train_limit = 6000;
  job.test_limit = 2000;
  job.eval_every = 0;
  job.lr = 0.1;
  job.heartbeat_ms = 100;
  job.snapshot_every_clocks = 20;
  return job;
}

std::vector<std::string> SupervisedJob(const std::string& dir,
                                       const JobConfig& job,
                                       std::vector<std::string> extra) {
  std::vector<std::string> flags = {"--timeout-s", "150",
                                    "--supervise", "-v",
                                    "--hetero",    "*:linear=0.004+0.00002",
                                    "--run-dir",   dir};
  flags.insert(flags.end(), extra.begin(), extra.end());
  return LaunchCommand(job, std::move(flags));
}

std::optional<uint64_t> PumpUntilARoundCompletes(TestCluster& cluster,
                                                 const std::string& dir,
                                                 int seconds) {
  for (int i = 0; i <= seconds * 20; ++i) {
    auto manifest = SnapshotManifest::Load(dir + "/snapshots");
    if (manifest.ok() && manifest->LatestComplete() != nullptr) {
      return manifest->LatestComplete()->round;
    }
    if (i < seconds * 20) cluster.Pump(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

}  // namespace lockstep
