// What only the RocksDB store does: survive a restart, give pruned rounds'
// disk space back, detect a flipped byte on disk, share a store with a
// read-only reader, and fail a round cleanly on a full disk.
#include "server/store/rocksdb_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/bytes.h"
#include "tests/support/sst_files.h"
#include "tests/support/sst_flip.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A chunk's bytes that appear nowhere else in the store's files.
std::string Pattern(char seed, size_t size) {
  std::string data(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    data[i] = static_cast<char>(seed + (i * 7) % 251);
  }
  return data;
}

Status WriteRound(SnapshotStore& store, uint64_t round,
                  const std::string& data) {
  LS_ASSIGN_OR_RETURN(auto writer, store.BeginRound(round));
  LS_RETURN_IF_ERROR(writer->AddChunk("w", 0, Bytes(data)));
  return writer->Commit(Bytes("meta"));
}

class RocksDbStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }
  std::string StorePath() const { return dir_.path() + "/shard-0"; }

  TempDir dir_{"lockstep-rocks"};
};

TEST_F(RocksDbStoreTest, RoundsSurviveReopeningAndLeftoversAreRemoved) {
  {
    auto store = RocksDbStore::Open(StorePath());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE(WriteRound(**store, 1, "one").ok());
    ASSERT_TRUE(WriteRound(**store, 2, "two").ok());
  }
  // What a writer killed before ingesting leaves behind.
  const std::string leftover = StorePath() + "/lockstep-round-3.sst.pending";
  std::ofstream(leftover) << "half a file";
  auto store = RocksDbStore::Open(StorePath());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_THAT(*(*store)->ListRounds(), ElementsAre(1, 2));
  EXPECT_EQ(*(*store)->ReadChunk(2, "w", 0), "two");
  EXPECT_FALSE(fs::exists(leftover));
}

TEST_F(RocksDbStoreTest, PrunedRoundsLeaveTheDisk) {
  // What a shard does each round: clear the round's number (a round of an
  // earlier life may hold it), write it, drop the rounds before the newest
  // three. After 60 rounds of 256 KiB, only three rounds' files remain.
  constexpr size_t kRoundBytes = 256 << 10;
  auto store = RocksDbStore::Open(StorePath());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (uint64_t round = 1; round <= 60; ++round) {
    ASSERT_TRUE((*store)->DeleteRound(round).ok());
    ASSERT_TRUE(WriteRound(**store, round,
                           Pattern(static_cast<char>(round), kRoundBytes))
                    .ok());
    const auto stored = (*store)->ListRounds();
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    for (uint64_t old : *stored) {
      if (old + 3 <= round) {
        ASSERT_TRUE((*store)->DeleteRound(old).ok());
      }
    }
  }
  EXPECT_THAT(*(*store)->ListRounds(), ElementsAre(58, 59, 60));
  const SstFiles on_disk = CountSstFiles(StorePath());
  EXPECT_LE(on_disk.files, 3) << on_disk.bytes << " bytes";
  EXPECT_LE(on_disk.bytes, 4 * kRoundBytes) << on_disk.files << " files";
  EXPECT_EQ(*(*store)->ReadChunk(58, "w", 0), Pattern(58, kRoundBytes));
  // A round number written again (a restarted coordinator that had not
  // recorded it) replaces the old round on disk too.
  ASSERT_TRUE((*store)->DeleteRound(60).ok());
  ASSERT_TRUE(WriteRound(**store, 60, Pattern('x', kRoundBytes)).ok());
  EXPECT_EQ(*(*store)->ReadChunk(60, "w", 0), Pattern('x', kRoundBytes));
  ASSERT_TRUE((*store)->DeleteRound(58).ok());
  EXPECT_THAT(*(*store)->ListRounds(), ElementsAre(59, 60));
  EXPECT_LE(CountSstFiles(StorePath()).files, 2);
  // And after a restart, which replays what the log holds.
  store->reset();
  store = RocksDbStore::Open(StorePath());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_THAT(*(*store)->ListRounds(), ElementsAre(59, 60));
  EXPECT_LE(CountSstFiles(StorePath()).bytes, 3 * kRoundBytes);
  EXPECT_EQ(*(*store)->ReadChunk(60, "w", 0), Pattern('x', kRoundBytes));
}

TEST_F(RocksDbStoreTest, AFlippedByteOnDiskIsACorruptionNamingTheChunk) {
  const std::string data = Pattern('a', 64 << 10);
  {
    auto store = RocksDbStore::Open(StorePath());
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(WriteRound(**store, 4, data).ok());
  }
  // Find the chunk's bytes in the round's SST file and flip one.
  const bool flipped = FlipByteInSst(StorePath(), data.substr(0, 64), 1000) > 0;
  ASSERT_TRUE(flipped) << "the chunk's bytes are in no SST file";
  auto store = RocksDbStore::Open(StorePath());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const auto chunk = (*store)->ReadChunk(4, "w", 0);
  EXPECT_EQ(chunk.status().code(), StatusCode::kCorruption);
  EXPECT_THAT(chunk.status().message(), HasSubstr("round 4 array w chunk 0"));
  // The restore's path, without the copy, finds it too and never hands
  // the bytes out.
  bool used = false;
  const Status visited =
      (*store)->VisitChunk(4, "w", 0, [&](std::span<const std::byte>) {
        used = true;
        return Status::Ok();
      });
  EXPECT_EQ(visited.code(), StatusCode::kCorruption);
  EXPECT_THAT(visited.message(), HasSubstr("round 4 array w chunk 0"));
  const Status ranged = (*store)->VisitChunks(
      4, "w", 0, 0, [&](uint32_t, std::span<const std::byte>) {
        used = true;
        return Status::Ok();
      });
  EXPECT_EQ(ranged.code(), StatusCode::kCorruption);
  EXPECT_THAT(ranged.message(), HasSubstr("round 4 array w chunk 0"));
  EXPECT_FALSE(used);
}

TEST_F(RocksDbStoreTest, AReaderOpensAStoreThatIsOpenForWriting) {
  auto writer = RocksDbStore::Open(StorePath());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(WriteRound(**writer, 1, "x").ok());
  auto reader = RocksDbStore::OpenReadOnly(StorePath());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_THAT(*(*reader)->ListRounds(), ElementsAre(1));
  EXPECT_EQ(*(*reader)->ReadChunk(1, "w", 0), "x");
  EXPECT_EQ((*reader)->BeginRound(2).status().code(),
            StatusCode::kFailedPrecondition);
  // A second writer is refused with the path in the reason.
  const auto second = RocksDbStore::Open(StorePath());
  EXPECT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr(StorePath()));
}

TEST_F(RocksDbStoreTest, OpeningWhereAFileIsInTheWayNamesThePath) {
  std::ofstream(dir_.path() + "/file") << "x";
  const auto store = RocksDbStore::Open(dir_.path() + "/file/shard-0");
  EXPECT_EQ(store.status().code(), StatusCode::kIOError);
  EXPECT_THAT(store.status().message(), HasSubstr(dir_.path() + "/file"));
}

// A 2 MiB tmpfs, mounted in a mount namespace of this process only, so
// nothing outlives the test even if it crashes.
TEST_F(RocksDbStoreTest, AFullDiskFailsTheRoundAndKeepsTheOlderOnes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a tmpfs";
  if (unshare(CLONE_NEWNS) != 0) {
    GTEST_SKIP() << "no private mount namespace (unshare: "
                 << std::strerror(errno) << "; run this test on its own)";
  }
  ASSERT_EQ(mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0);
  const std::string disk = dir_.path() + "/disk";
  fs::create_directory(disk);
  ASSERT_EQ(mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=2m"), 0)
      << std::strerror(errno);
  {
    auto store = RocksDbStore::Open(disk + "/shard-0");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE(WriteRound(**store, 1, Pattern('a', 64 << 10)).ok());
    const Status full = WriteRound(**store, 2, Pattern('b', 4 << 20));
    EXPECT_EQ(full.code(), StatusCode::kIOError);
    EXPECT_THAT(full.message(), HasSubstr("round 2"));
    EXPECT_THAT(full.message(), HasSubstr("space")) << full.message();
    EXPECT_THAT(*(*store)->ListRounds(), ElementsAre(1));
    EXPECT_EQ(*(*store)->ReadChunk(1, "w", 0), Pattern('a', 64 << 10));
    // Nothing of the failed round is left to fill the disk.
    for (const auto& entry : fs::directory_iterator(disk + "/shard-0")) {
      EXPECT_THAT(entry.path().filename().string(),
                  ::testing::Not(HasSubstr("pending")));
    }
    // Once space is free again, rounds go on.
    EXPECT_TRUE(WriteRound(**store, 3, Pattern('c', 64 << 10)).ok());
    EXPECT_THAT(*(*store)->ListRounds(), ElementsAre(1, 3));
  }
  EXPECT_EQ(umount2(disk.c_str(), MNT_DETACH), 0);
}

}  // namespace
}  // namespace lockstep
