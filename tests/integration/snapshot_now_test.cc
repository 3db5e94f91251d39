// lockstep-snapshot now against live jobs: a job with only --snapshot-dir
// (no periodic rounds) takes a round on request, and the tool waits until
// it is complete; a job without --snapshot-dir refuses, saying why.
#include <gtest/gtest.h>

#include "snapshot_format/snapshot_manifest.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

// Snapshot rounds only on request: a snapshot dir, no schedule.
JobConfig NowJob(const std::string& dir, bool snapshot_dir) {
  JobConfig job;
  job.servers = 2;
  job.workers = 2;
  job.model = "softmax";
  job.data = "synthetic:samples=2000:test=400:dim=12:classes=3";
  job.max_clocks = 400;
  job.eval_every = 0;
  job.heartbeat_ms = 100;
  if (snapshot_dir) job.snapshot_dir = dir + "/s";
  return job;
}

// Starts the roles (each clock takes about 5 ms), asks for a round once
// training runs, and returns the tool's exit and output.
std::pair<ExitInfo, std::string> AskForARound(TestCluster& cluster,
                                              const std::string& dir,
                                              bool snapshot_dir) {
  EXPECT_TRUE(
      cluster.StartCoordinator(NowJob(dir, snapshot_dir), {"--run-dir", dir})
          .ok());
  for (int s = 0; s < 2; ++s) EXPECT_TRUE(cluster.StartServer(s).ok());
  for (int w = 0; w < 2; ++w) {
    EXPECT_TRUE(
        cluster.StartWorker(w, {"--hetero", "linear=0.005+0.00001"}).ok());
  }
  for (int i = 0; i < 200 && ReadLines(dir + "/metrics.jsonl").size() < 3;
       ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  // Only the admin key asks for a round: a worker's is refused.
  EXPECT_TRUE(cluster
                  .Start({BinaryPath("lockstep-snapshot"), "now", dir, "--keys",
                          cluster.keys_dir() + "/worker.key"},
                         "as worker")
                  .ok());
  auto refused = cluster.WaitFor("as worker", std::chrono::seconds(60));
  EXPECT_TRUE(refused.ok() && !refused->ok());
  EXPECT_TRUE(cluster.Printed("as worker", "this needs the admin key"))
      << cluster.Output("as worker");
  EXPECT_TRUE(cluster
                  .Start({BinaryPath("lockstep-snapshot"), "now", dir, "--keys",
                          cluster.keys_dir()},
                         "now")
                  .ok());
  auto exit = cluster.WaitFor("now", std::chrono::seconds(60));
  EXPECT_TRUE(exit.ok());
  return {exit.ok() ? *exit : ExitInfo{true, -1}, cluster.Output("now")};
}

TEST(SnapshotNowTest, ALiveJobTakesARoundOnRequest) {
  const std::string dir = MakeTempDir("lockstep-now");
  TestCluster cluster;
  const auto [exit, out] = AskForARound(cluster, dir, true);
  EXPECT_TRUE(exit.ok()) << out << cluster.Output("coordinator");
  EXPECT_NE(out.find("round 1 (clock "), std::string::npos) << out;
  EXPECT_NE(out.find(") complete: "), std::string::npos) << out;
  auto manifest = SnapshotManifest::Load(dir + "/s");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_EQ(manifest->rounds().size(), 1u);
  EXPECT_TRUE(manifest->rounds()[0].complete);
  EXPECT_GE(manifest->rounds()[0].clock, 0);
  auto done = cluster.WaitFor("coordinator", std::chrono::seconds(60));
  EXPECT_TRUE(done.ok() && done->ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
}

TEST(SnapshotNowTest, AJobWithoutASnapshotDirRefuses) {
  const std::string dir = MakeTempDir("lockstep-now-off");
  TestCluster cluster;
  const auto [exit, out] = AskForARound(cluster, dir, false);
  EXPECT_FALSE(exit.ok()) << out;
  EXPECT_NE(out.find("this job has no --snapshot-dir"), std::string::npos)
      << out;
  auto done = cluster.WaitFor("coordinator", std::chrono::seconds(60));
  EXPECT_TRUE(done.ok() && done->ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
}

}  // namespace
}  // namespace lockstep
