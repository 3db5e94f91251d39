// The SnapshotStore contract, run against both stores.
#include "server/store/snapshot_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/store/memory_store.h"
#include "server/store/rocksdb_store.h"
#include "tests/support/bytes.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct StoreKind {
  std::string name;
  std::function<std::unique_ptr<SnapshotStore>(const std::string& dir)> open;
};

class SnapshotStoreTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    store_ = GetParam().open(dir_.path() + "/store");
    ASSERT_NE(store_, nullptr);
  }

  // Writes round `round`: arrays "a" (2 chunks) and "b" (1 chunk).
  void WriteRound(uint64_t round, const std::string& tag) {
    auto writer = store_->BeginRound(round);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->AddChunk("a", 0, Bytes(tag + "a0")).ok());
    ASSERT_TRUE((*writer)->AddChunk("a", 1, Bytes(tag + "a1")).ok());
    ASSERT_TRUE((*writer)->AddChunk("b", 0, Bytes(tag + "b0")).ok());
    ASSERT_TRUE((*writer)->Commit(Bytes("meta " + tag)).ok());
  }

  TempDir dir_{"lockstep-store"};
  std::unique_ptr<SnapshotStore> store_;
};

TEST_P(SnapshotStoreTest, ReadsBackWhatACommittedRoundHolds) {
  WriteRound(7, "x");
  EXPECT_THAT(*store_->ListRounds(), ElementsAre(7));
  EXPECT_EQ(*store_->ReadMeta(7), "meta x");
  EXPECT_EQ(*store_->ReadChunk(7, "a", 0), "xa0");
  EXPECT_EQ(*store_->ReadChunk(7, "a", 1), "xa1");
  EXPECT_EQ(*store_->ReadChunk(7, "b", 0), "xb0");
  EXPECT_EQ(store_->ReadChunk(7, "b", 1).status().code(),
            StatusCode::kNotFound);
  EXPECT_GT(*store_->RoundBytes(7), 0u);
}

TEST_P(SnapshotStoreTest, VisitsAChunksBytesAndPassesOnItsErrors) {
  WriteRound(7, "x");
  std::string seen;
  auto collect = [&](std::span<const std::byte> bytes) {
    seen.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return Status::Ok();
  };
  ASSERT_TRUE(store_->VisitChunk(7, "a", 1, collect).ok());
  EXPECT_EQ(seen, "xa1");
  EXPECT_EQ(store_->VisitChunk(7, "b", 1, collect).code(),
            StatusCode::kNotFound);
  const Status refused = store_->VisitChunk(
      7, "b", 0, [](std::span<const std::byte>) { return Corruption("mine"); });
  EXPECT_EQ(refused.message(), "mine");
}

TEST_P(SnapshotStoreTest, VisitsARangeOfChunksInOrder) {
  auto writer = store_->BeginRound(3);
  ASSERT_TRUE(writer.ok());
  for (uint32_t i = 0; i < 20; ++i) {
    ASSERT_TRUE(
        (*writer)->AddChunk("a", i, Bytes("a" + std::to_string(i))).ok());
  }
  ASSERT_TRUE((*writer)->AddChunk("b", 0, Bytes("b0")).ok());
  ASSERT_TRUE((*writer)->Commit({}).ok());
  std::vector<std::string> seen;
  auto collect = [&](uint32_t i, std::span<const std::byte> bytes) {
    seen.push_back(
        std::to_string(i) + "=" +
        std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    return Status::Ok();
  };
  ASSERT_TRUE(store_->VisitChunks(3, "a", 9, 11, collect).ok());
  EXPECT_THAT(seen, ElementsAre("9=a9", "10=a10", "11=a11"));
  seen.clear();
  // Past the array's end: the chunks there, then NotFound naming the next.
  const Status past = store_->VisitChunks(3, "a", 18, 21, collect);
  EXPECT_EQ(past.code(), StatusCode::kNotFound);
  EXPECT_THAT(past.message(), HasSubstr("chunk 20"));
  EXPECT_THAT(seen, ElementsAre("18=a18", "19=a19"));
}

TEST_P(SnapshotStoreTest, KeepsLargeAndEmptyChunksIntact) {
  std::string big(3 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31);
  auto writer = store_->BeginRound(1);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->AddChunk("big", 0, Bytes(big)).ok());
  ASSERT_TRUE((*writer)->AddChunk("empty", 0, {}).ok());
  ASSERT_TRUE((*writer)->Commit({}).ok());
  EXPECT_EQ(*store_->ReadChunk(1, "big", 0), big);
  EXPECT_EQ(*store_->ReadChunk(1, "empty", 0), "");
  EXPECT_EQ(*store_->ReadMeta(1), "");
  EXPECT_GE(*store_->RoundBytes(1), big.size());
}

TEST_P(SnapshotStoreTest, AnUncommittedRoundIsInvisible) {
  WriteRound(1, "old");
  {
    auto writer = store_->BeginRound(2);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->AddChunk("a", 0, Bytes("torn")).ok());
  }  // dropped without Commit
  EXPECT_THAT(*store_->ListRounds(), ElementsAre(1));
  EXPECT_EQ(store_->ReadChunk(2, "a", 0).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadMeta(2).status().code(), StatusCode::kNotFound);
  // The round number is free again.
  WriteRound(2, "new");
  EXPECT_EQ(*store_->ReadChunk(2, "a", 0), "newa0");
}

TEST_P(SnapshotStoreTest, ListsRoundsInOrderAndDeletesOneAtATime) {
  for (uint64_t round : {3, 1, 10, 2}) WriteRound(round, std::to_string(round));
  EXPECT_THAT(*store_->ListRounds(), ElementsAre(1, 2, 3, 10));
  ASSERT_TRUE(store_->DeleteRound(2).ok());
  ASSERT_TRUE(store_->DeleteRound(99).ok());  // not stored: fine
  EXPECT_THAT(*store_->ListRounds(), ElementsAre(1, 3, 10));
  EXPECT_EQ(*store_->ReadChunk(3, "b", 0), "3b0");
  EXPECT_EQ(store_->ReadChunk(2, "a", 0).status().code(),
            StatusCode::kNotFound);
  for (uint64_t round : {1, 3, 10})
    ASSERT_TRUE(store_->DeleteRound(round).ok());
  EXPECT_THAT(*store_->ListRounds(), IsEmpty());
}

TEST_P(SnapshotStoreTest, RefusesARoundThatIsAlreadyStored) {
  WriteRound(4, "x");
  const auto again = store_->BeginRound(4);
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(*store_->ReadChunk(4, "a", 0), "xa0");
}

TEST_P(SnapshotStoreTest, RefusesChunksOutOfOrderAndBadNames) {
  auto writer = store_->BeginRound(1);
  ASSERT_TRUE(writer.ok());
  RoundWriter& w = **writer;
  // An incremental round stores some chunks of an array: gaps are fine,
  // going back is not.
  ASSERT_TRUE(w.AddChunk("a", 1, {}).ok());
  ASSERT_TRUE(w.AddChunk("b", 0, {}).ok());
  EXPECT_THAT(w.AddChunk("a", 2, {}).message(), HasSubstr("out of order"));
  EXPECT_THAT(w.AddChunk("b", 0, {}).message(), HasSubstr("out of order"));
  EXPECT_THAT(w.AddChunk("c.d", 0, {}).message(), HasSubstr("[0-9A-Za-z_]"));
  EXPECT_THAT(w.AddChunk("", 0, {}).message(), HasSubstr("[0-9A-Za-z_]"));
  ASSERT_TRUE(w.AddChunk("b", 3, {}).ok());
  EXPECT_THAT(w.AddChunk("b", 2, {}).message(), HasSubstr("out of order"));
  ASSERT_TRUE(w.AddChunk("b_c", 0, {}).ok());
  ASSERT_TRUE(w.Commit({}).ok());
  EXPECT_EQ(w.Commit({}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.AddChunk("z", 0, {}).code(), StatusCode::kFailedPrecondition);
}

INSTANTIATE_TEST_SUITE_P(
    Stores, SnapshotStoreTest,
    ::testing::Values(
        StoreKind{"memory",
                  [](const std::string&) -> std::unique_ptr<SnapshotStore> {
                    return std::make_unique<MemoryStore>();
                  }},
        StoreKind{"rocksdb",
                  [](const std::string& dir) -> std::unique_ptr<SnapshotStore> {
                    auto store = RocksDbStore::Open(dir);
                    if (!store.ok()) return nullptr;
                    return std::move(*store);
                  }}),
    [](const auto& info) { return info.param.name; });

TEST(MemoryStoreTest, AFlippedByteIsACorruptionNamingTheChunk) {
  MemoryStore store;
  auto writer = store.BeginRound(5);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->AddChunk("w", 0, Bytes("0123456789")).ok());
  ASSERT_TRUE((*writer)->AddChunk("w", 1, Bytes("abcdefghij")).ok());
  ASSERT_TRUE((*writer)->Commit({}).ok());
  ASSERT_TRUE(store.FlipByte(5, "w", 1, 3).ok());
  EXPECT_EQ(*store.ReadChunk(5, "w", 0), "0123456789");
  const auto bad = store.ReadChunk(5, "w", 1);
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_THAT(bad.status().message(), HasSubstr("round 5 array w chunk 1"));
  EXPECT_THAT(bad.status().message(), HasSubstr("checksum mismatch"));
}

}  // namespace
}  // namespace lockstep
