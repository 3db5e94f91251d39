#include "tests/integration/recovery_job.h"

#include <gtest/gtest.h>

#include <cstring>

#include "server/store/rocksdb_store.h"
#include "snapshot/snapshot_manifest.h"
#include "tests/support/sst_flip.h"
#include "worker/worker_runtime.h"

namespace lockstep {

std::vector<std::string> RecoveryJob(const std::string& dir,
                                     const std::string& data_order) {
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
          data_order,
          "--snapshot-every-clocks",
          "10",
          "--snapshot-dir",
          dir + "/snapshots",
          "--run-dir",
          dir};
}

// Starts the job's servers and workers (the evaluator StartCoordinator
// started dumps the final model); every worker takes 7-10 ms per clock, so
// the job runs for a few seconds.
void StartRoles(TestCluster& cluster, const std::string& dir) {
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  StartWorkers(cluster, dir);
}

void StartWorkers(TestCluster& cluster, const std::string& /*dir*/) {
  for (int w = 0; w < 3; ++w) {
    ASSERT_TRUE(
        cluster.StartWorker(w, {"--hetero", "linear=0.005+0.0002"}).ok());
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
std::vector<float> UninterruptedModel(const std::string& data_order) {
  const std::string dir = MakeTempDir("lockstep-whole");
  TestCluster cluster;
  EXPECT_TRUE(cluster.StartCoordinator(RecoveryJob(dir, data_order)).ok());
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

std::vector<std::string> SupervisedJob(const std::string& dir,
                                       std::vector<std::string> flags) {
  std::vector<std::string> argv = {BinaryPath("lockstep-launch"),
                                   "--timeout-s",
                                   "150",
                                   "--supervise",
                                   "-v",
                                   "--servers",
                                   "2",
                                   "--model",
                                   "softmax",
                                   "--batch",
                                   "32",
                                   "--train-limit",
                                   "6000",
                                   "--test-limit",
                                   "2000",
                                   "--eval-every",
                                   "0",
                                   "--lr",
                                   "0.1",
                                   "--heartbeat-ms",
                                   "100",
                                   "--snapshot-every-clocks",
                                   "20",
                                   "--hetero",
                                   "*:linear=0.004+0.00002",
                                   "--run-dir",
                                   dir};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
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
