// Snapshot rounds on disk in a whole job (threads of this process): a job
// that takes many rounds keeps the newest snapshot_keep of them in the
// manifest, and in every shard's store at most one more (the oldest, which
// a server deletes when it writes the next round), files and bytes alike.
#include <gtest/gtest.h>

#include "server/store/rocksdb_store.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tests/cluster/in_process_cluster.h"
#include "tests/support/sst_files.h"
#include "tests/support/temp_dir.h"
#include "tools/snapshot/whole_round.h"

namespace lockstep {
namespace {

TEST(SnapshotPruneTest, OnlyTheKeptRoundsStayOnDisk) {
  TempDir tmp("snapshot-prune");
  ASSERT_FALSE(tmp.path().empty());
  InProcessJob run;
  JobConfig& job = run.job;
  job.servers = 2;
  job.workers = 2;
  job.batches = {8, 8};
  job.model = "mlp:16";
  job.data = "synthetic:samples=400:test=100:dim=10:classes=3";
  job.optimizer = "momentum";
  // A round due while the last one is still being written is skipped, so
  // how many rounds a job of N clocks takes depends on the disk and the
  // load; a job of 2 s of training takes dozens (a loaded 2-core machine
  // writes a round in well under 0.2 s).
  job.max_clocks = 100000;
  job.budget_s = 2;
  job.eval_every = 0;
  job.heartbeat_ms = 500;
  job.snapshot_every_clocks = 2;
  job.snapshot_keep = 3;
  job.snapshot_dir = tmp.path() + "/rounds";
  const InProcessResult ran = RunInProcess(run);
  ASSERT_TRUE(ran.ok()) << ran.Failures();

  auto manifest = SnapshotManifest::Load(job.snapshot_dir);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  std::vector<uint64_t> kept;
  for (const ManifestRound& r : manifest->rounds()) kept.push_back(r.round);
  ASSERT_EQ(kept.size(), 3u);
  // At least twice as many rounds were taken as are kept.
  ASSERT_GE(kept.back(), 6u);
  for (uint32_t shard = 0; shard < job.servers; ++shard) {
    SCOPED_TRACE("shard " + std::to_string(shard));
    const std::string dir = ShardStoreDir(job.snapshot_dir, shard);
    uint64_t round_bytes = 0;
    {
      auto store = RocksDbStore::Open(dir);
      ASSERT_TRUE(store.ok()) << store.status().ToString();
      std::vector<uint64_t> stored = *(*store)->ListRounds();
      if (!stored.empty() && stored.front() + 1 == kept.front()) {
        stored.erase(stored.begin());  // pruned, deleted with the next round
      }
      EXPECT_EQ(stored, kept);
      round_bytes = *(*store)->RoundBytes(kept.back());
    }
    const SstFiles on_disk = CountSstFiles(dir);
    EXPECT_LE(on_disk.files, 4);
    EXPECT_LE(on_disk.bytes, 5 * round_bytes)
        << on_disk.files << " table files";
  }
}

}  // namespace
}  // namespace lockstep
