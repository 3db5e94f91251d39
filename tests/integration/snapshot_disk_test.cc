// A disk that fills up under a live job: a real tmpfs (mounted in a mount
// namespace of this test process, which its children share) holds the
// snapshots; once a round is complete the test fills it to the last byte.
// Rounds then fail with the disk's reason while training goes on, and once
// space is free again rounds complete again, up to the job's last clock.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "snapshot_format/snapshot_manifest.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// Writes `path` until the file system has no byte left.
void FillTheDisk(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  const std::string block(64 << 10, 'x');
  while (std::fwrite(block.data(), 1, block.size(), file) == block.size() &&
         std::fflush(file) == 0) {
  }
  std::fclose(file);
}

TEST(SnapshotDiskTest, AFullDiskFailsRoundsWhileTrainingGoesOn) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a tmpfs";
  if (unshare(CLONE_NEWNS) != 0) {
    GTEST_SKIP() << "no private mount namespace (unshare: "
                 << std::strerror(errno) << ")";
  }
  ASSERT_EQ(mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0);
  const std::string dir = MakeTempDir("lockstep-full");
  const std::string disk = dir + "/disk";
  fs::create_directory(disk);
  ASSERT_EQ(mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=16m"), 0)
      << std::strerror(errno);
  TestCluster cluster;
  {
    JobConfig job;
    job.servers = 2;
    job.workers = 2;
    job.model = "mlp:16";
    job.data = "synthetic:samples=2000:test=400:dim=20:classes=4";
    job.optimizer = "adam";
    job.lr = 0.005;
    job.max_clocks = 300;
    job.eval_every = 0;
    job.heartbeat_ms = 100;
    job.snapshot_every_clocks = 10;
    // Rounds go to the 16 MiB tmpfs, which fills up.
    job.snapshot_dir = disk + "/snapshots";
    ASSERT_TRUE(
        cluster.StartCoordinator(job, {"--run-dir", dir + "/run"}).ok());
    for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
    for (int w = 0; w < 2; ++w) {
      ASSERT_TRUE(
          cluster.StartWorker(w, {"--hetero", "linear=0.01+0.00001"}).ok());
    }
    for (int i = 0; i < 400 && !cluster.Printed("coordinator", ") complete: ");
         ++i) {
      cluster.Pump(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(cluster.Printed("coordinator", ") complete: "))
        << cluster.Output("coordinator");
    FillTheDisk(disk + "/filler");
    for (int i = 0; i < 400 && !cluster.Printed("coordinator",
                                                "failed; older rounds stay");
         ++i) {
      cluster.Pump(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(cluster.Printed("coordinator", "No space left on device"))
        << cluster.Output("coordinator");
    fs::remove(disk + "/filler");

    auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
    ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
    EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  }
  const std::string summary = ReadFile(dir + "/run/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), 300) << summary;
  EXPECT_GE(JsonNumber(summary, "snapshot_rounds_failed"), 1) << summary;
  EXPECT_GE(JsonNumber(summary, "snapshot_rounds_complete"), 2) << summary;
  // The round after the last clock, written once space was free again.
  auto manifest = SnapshotManifest::Load(disk + "/snapshots");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_NE(manifest->LatestComplete(), nullptr);
  EXPECT_EQ(manifest->LatestComplete()->clock, 299);
  if (::testing::Test::HasFailure()) {
    for (const char* role : {"coordinator", "server 0", "server 1"}) {
      ADD_FAILURE() << role << ":\n" << cluster.Output(role);
    }
  }
  EXPECT_EQ(umount2(disk.c_str(), MNT_DETACH), 0);
}

}  // namespace
}  // namespace lockstep
