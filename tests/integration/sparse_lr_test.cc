// Sparse logistic regression on generated power-law LIBSVM data across real
// processes (2 shards, 2 workers): the held-out accuracy must end well above
// the majority-class rate; its incremental snapshot rounds stay readable.
#include <gtest/gtest.h>

#include "server/snapshot/shard_round.h"
#include "server/store/rocksdb_store.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tests/integration/test_cluster.h"
#include "worker/data/libsvm_loader.h"

namespace lockstep {
namespace {

// Every round the manifest records complete reads back whole from each
// shard's store, and the shards stored some of them as changes only.
void ExpectRoundsReadableThroughTheirChains(const std::string& snapshots) {
  auto manifest = SnapshotManifest::Load(snapshots);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  int complete = 0;
  int incremental = 0;
  for (uint32_t k = 0; k < 2; ++k) {
    auto store =
        RocksDbStore::OpenReadOnly(snapshots + "/shard-" + std::to_string(k));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (const ManifestRound& r : manifest->rounds()) {
      if (!r.complete) continue;
      ++complete;
      const auto round = ReadShardRound(**store, r.round);
      ASSERT_TRUE(round.ok()) << round.status().ToString();
      EXPECT_EQ(round->meta.clock, r.clock);
      incremental += round->meta.parent != 0 ? 1 : 0;
    }
  }
  std::cout << incremental << " of " << complete
            << " kept shard rounds hold changes only\n";
  EXPECT_EQ(complete, 4);  // snapshot_keep 2, on both shards
  // A round a clock touches a few of the 20000 rows: of 2 kept rounds per
  // shard with a full one every 4, most hold changes only.
  EXPECT_GE(incremental, 1);
}

TEST(SparseLrTest, LearnsGeneratedDataWellAboveChance) {
  const std::string dir = MakeTempDir("lockstep-sparse");
  const std::string data = dir + "/train.libsvm";
  TestCluster cluster;
  ASSERT_TRUE(
      cluster
          .Start({BinaryPath("lockstep-gen-sparse"), "--out", data, "--samples",
                  "20000", "--features", "20000", "--nnz", "20", "--seed", "3"},
                 "gen")
          .ok());
  auto gen = cluster.WaitFor("gen", std::chrono::seconds(60));
  ASSERT_TRUE(gen.ok() && gen->ok()) << cluster.Output("gen");

  // The held-out 10% is the test set; its majority class is the baseline.
  auto all = LoadLibsvm(data, 0, 0);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  double positives = 0;
  for (uint64_t i = 18000; i < all->size; ++i) positives += all->labels[i];
  const double majority = std::max(positives, 2000 - positives) / 2000;

  JobConfig job;
  job.servers = 2;
  job.workers = 2;
  job.model = "sparse-lr";
  job.data = data;
  job.batches = {64};
  job.optimizer = "adam";
  job.lr = 0.05;
  job.epochs = 3;
  job.eval_every = 0;
  // Incremental rounds under a tight keep: every recorded round must stay
  // readable through its chain of parents.
  job.snapshot_dir = dir + "/snapshots";
  job.snapshot_every_clocks = 1;
  job.snapshot_keep = 2;
  job.snapshot_full_every = 4;
  ASSERT_TRUE(cluster.StartCoordinator(job, {"--run-dir", dir}).ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  for (int w = 0; w < 2; ++w) ASSERT_TRUE(cluster.StartWorker(w).ok());
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(180));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));

  const std::string summary = ReadFile(dir + "/summary.json");
  const double accuracy = JsonNumber(summary, "test_accuracy");
  std::cout << "sparse-lr test accuracy " << accuracy << ", majority class "
            << majority << "\n";
  EXPECT_GT(accuracy, std::max(0.75, majority + 0.15)) << summary;
  // The evaluator reports AUC in its final evaluation line.
  bool saw_auc = false;
  for (const auto& line : cluster.Lines("evaluator")) {
    const auto pos = line.find("auc ");
    if (line.find("final test accuracy") != std::string::npos &&
        pos != std::string::npos) {
      saw_auc = true;
      EXPECT_GT(std::stod(line.substr(pos + 4)), 0.8) << line;
    }
  }
  EXPECT_TRUE(saw_auc) << cluster.Output("evaluator");
  ExpectRoundsReadableThroughTheirChains(job.snapshot_dir);
}

}  // namespace
}  // namespace lockstep
