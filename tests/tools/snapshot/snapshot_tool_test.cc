// lockstep-snapshot's commands over a snapshot folder written here: two
// shards' rounds in RocksDB stores and a manifest.
#include "tools/snapshot/snapshot_tool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/model/dense_store.h"
#include "server/model/sparse_table.h"
#include "server/snapshot/shard_round.h"
#include "server/store/rocksdb_store.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tests/support/sst_flip.h"
#include "tests/support/temp_dir.h"
#include "tools/snapshot/npy_file.h"
#include "tools/snapshot/whole_round.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class SnapshotToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto layout = KeyLayout::Build(
        {{.name = "layer0/w", .shape = {3, 4}, .init_scale = 1},
         {.name = "b", .shape = {5}, .init_scale = 1}},
        2, 2);
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    layout_ = *layout;
    job_.optimizer = "momentum";
    job_.servers = 2;
    for (uint64_t round : {1u, 2u}) {
      for (uint32_t k = 0; k < 2; ++k) WriteShard(round, k);
    }
    // Round 2 is in the stores only: cut short.
    ASSERT_TRUE(SaveManifestOf(1, 9).ok());
  }

  // Saves a manifest that records `round` only, complete on both shards,
  // taken at `clock`.
  Status SaveManifestOf(uint64_t round, int64_t clock) {
    SnapshotManifest manifest(job_);
    ManifestRound r;
    r.round = round;
    r.clock = clock;
    r.shards = 2;
    r.complete = true;
    r.unix_time = 1.8e9;
    manifest.Record(r);
    return manifest.Save(dir_.path());
  }

  // Shard k's part of `round`: initial weights plus the round number,
  // momentum = -weight, sparse rows for the even ids it owns of 0..9.
  // With `parent`, the round is stored as its changes since that round
  // (the shard's last one): the weights of `parent`, but for key 0 of
  // the shard (+100), and one more sparse row (id 10, shard 0's).
  void WriteShard(uint64_t round, uint32_t k, uint64_t parent = 0) {
    const ShardInfo& own = layout_.shards()[k];
    auto dense = DenseStore::Create(own.dense, layout_.tensors(), 3, 1);
    ASSERT_TRUE(dense.ok());
    for (size_t i = 0; i < (*dense)->range().size(); ++i) {
      (*dense)->mutable_weights()[i] +=
          static_cast<float>(parent == 0 ? round : parent) +
          (parent != 0 && i == 0 ? 100.0f : 0.0f);
      (*dense)->state()[i] = -(*dense)->weights()[i];
    }
    dense_.push_back(std::move(dense).value());
    SparseTable sparse(2, 1);
    for (uint64_t id = 0; id < (parent == 0 ? 10u : 11u); id += 2) {
      if (!own.OwnsSparse(id)) continue;
      const float w[2] = {static_cast<float>(id), 0.5f};
      const float m[2] = {1, 1};
      const float* slots[1] = {m};
      ASSERT_TRUE(sparse.LoadRow(id, w, slots).ok());
    }
    std::vector<CaptureArray> arrays = dense_.back()->SnapshotArrays();
    for (auto& a : sparse.SnapshotArrays()) arrays.push_back(a);
    auto capture = std::make_unique<SnapshotCapture>(
        arrays, 16, parent == 0 ? nullptr : captures_[k].get());
    capture->Run();
    ShardRoundMeta meta;
    meta.parent = parent;
    meta.round = round;
    meta.clock = static_cast<int64_t>(round) * 10 - 1;
    meta.shard = k;
    meta.layout = layout_;
    meta.job = job_;
    meta.optimizer = "momentum";
    meta.state_slots = 1;
    meta.step = static_cast<int64_t>(round) * 10;
    meta.sparse_rows = sparse.rows();
    auto store = RocksDbStore::Open(ShardStoreDir(dir_.path(), k));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ShardRoundMeta written;
    ASSERT_TRUE(WriteShardRound(**store, meta, *capture, &written).ok());
    written_parent_[k] = written.parent;
    captures_[k] = std::move(capture);
  }

  TempDir dir_{"snapshot-tool"};
  KeyLayout layout_;
  JobConfig job_;
  std::vector<std::unique_ptr<DenseStore>> dense_;  // round 1 then 2
  std::map<uint32_t, std::unique_ptr<SnapshotCapture>> captures_;  // last
  std::map<uint32_t, uint64_t> written_parent_;  // of the last round
};

TEST_F(SnapshotToolTest, ListShowsCompleteAndCutShortRounds) {
  std::ostringstream out;
  ASSERT_TRUE(ListSnapshots(dir_.path(), out).ok());
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("    1      9  2027-01-15T08:00:00Z"));
  EXPECT_THAT(text, HasSubstr("complete"));
  EXPECT_THAT(text, HasSubstr("not recorded (cut short; never restored)"));
}

TEST_F(SnapshotToolTest, ListSaysARoundOlderThanTheManifestsWasPruned) {
  // The manifest keeps round 2 only; round 1 is on both shards, and then
  // on one of them.
  ASSERT_TRUE(SaveManifestOf(2, 19).ok());
  std::ostringstream out;
  ASSERT_TRUE(ListSnapshots(dir_.path(), out).ok());
  EXPECT_THAT(out.str(),
              HasSubstr("pruned (was complete; files not yet deleted)"));
  EXPECT_THAT(out.str(), Not(HasSubstr("not recorded")));
  {
    auto store = RocksDbStore::Open(ShardStoreDir(dir_.path(), 1));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->DeleteRound(1).ok());
  }
  out.str("");
  ASSERT_TRUE(ListSnapshots(dir_.path(), out).ok());
  EXPECT_THAT(out.str(),
              HasSubstr("pruned (on 1 of 2 shards; files not yet deleted)"));
}

TEST_F(SnapshotToolTest, InspectNamesTensorsShardsAndChecksums) {
  std::ostringstream out;
  ASSERT_TRUE(InspectSnapshot(dir_.path(), 0, out).ok());
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("round 1: complete"));
  EXPECT_THAT(text, HasSubstr("clock 9, step 10"));
  EXPECT_THAT(text, HasSubstr("layer0/w [3x4] keys [0, 12)"));
  EXPECT_THAT(text, HasSubstr("shard 1: keys ["));
  EXPECT_THAT(text, HasSubstr("dense_state_0: "));
  EXPECT_THAT(text, HasSubstr("crc32 "));
}

TEST_F(SnapshotToolTest, ExportWritesNpyFilesNumpyCanRead) {
  const std::string out_dir = dir_.path() + "/export";
  std::ostringstream out;
  ASSERT_TRUE(ExportSnapshot(dir_.path(), 1, out_dir, out).ok()) << out.str();
  const std::string npy = ReadAll(out_dir + "/layer0_w.npy");
  const std::string header = NpyHeader("<f4", {3, 4});
  ASSERT_EQ(npy.size(), header.size() + 12 * sizeof(float));
  EXPECT_EQ(npy.substr(0, header.size()), header);
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_THAT(header, HasSubstr("'shape': (3, 4)"));
  EXPECT_THAT(NpyHeader("<f4", {5}), HasSubstr("'shape': (5,)"));
  // model.f32: round 1's weights of both shards, in key order.
  const std::string raw = ReadAll(out_dir + "/model.f32");
  ASSERT_EQ(raw.size(), 17 * sizeof(float));
  std::vector<float> expected;
  for (size_t k = 0; k < 2; ++k) {
    for (float w : dense_[k]->weights()) expected.push_back(w);
  }
  EXPECT_EQ(std::memcmp(raw.data(), expected.data(), raw.size()), 0);
  EXPECT_EQ(ReadAll(out_dir + "/b.f32"), raw.substr(12 * sizeof(float)));
  const std::string ids = ReadAll(out_dir + "/sparse_ids.npy");
  EXPECT_EQ(ids.size(), NpyHeader("<u8", {5}).size() + 5 * 8);
  EXPECT_THAT(out.str(), HasSubstr("exported round 1 (clock 9)"));
}

TEST_F(SnapshotToolTest, VerifyNamesAFlippedByte) {
  std::ostringstream clean;
  ASSERT_TRUE(VerifySnapshots(dir_.path(), 0, clean).ok()) << clean.str();
  EXPECT_THAT(clean.str(), HasSubstr("round 2 shard 1: ok"));
  // Flip a byte of round 1's weights of the shard with the most keys
  // inside its SST file.
  const uint32_t k =
      dense_[0]->range().size() >= dense_[1]->range().size() ? 0 : 1;
  const auto weights = std::as_bytes(dense_[k]->weights());
  ASSERT_GE(weights.size(), 16u);
  const std::string needle(reinterpret_cast<const char*>(weights.data()), 16);
  const bool flipped =
      FlipByteInSst(ShardStoreDir(dir_.path(), k), needle, 3) > 0;
  ASSERT_TRUE(flipped);
  std::ostringstream out;
  const Status bad = VerifySnapshots(dir_.path(), 0, out);
  EXPECT_EQ(bad.code(), StatusCode::kCorruption) << bad.ToString();
  EXPECT_THAT(bad.message(), HasSubstr("round 1"));
  const std::string shard = "shard " + std::to_string(k);
  EXPECT_THAT(out.str(), HasSubstr("round 1 " + shard + ": BAD"));
  EXPECT_THAT(out.str(), HasSubstr("round 2 " + shard + ": ok"));
  EXPECT_EQ(LoadWholeRound(dir_.path(), 1).status().code(),
            StatusCode::kCorruption);
}

TEST_F(SnapshotToolTest,
       AnIncrementalRoundIsInspectedVerifiedAndExportedWhole) {
  for (uint32_t k = 0; k < 2; ++k) WriteShard(3, k, /*parent=*/2);
  ASSERT_TRUE(SaveManifestOf(3, 29).ok());
  // Shard 1 (5 keys) changed more than half of its bytes: written full.
  EXPECT_EQ(written_parent_[0], 2u);
  EXPECT_EQ(written_parent_[1], 0u);
  std::ostringstream inspect;
  ASSERT_TRUE(InspectSnapshot(dir_.path(), 3, inspect).ok());
  EXPECT_THAT(inspect.str(),
              HasSubstr("6 sparse rows, stored as the changes since round 2"));
  std::ostringstream verify;
  ASSERT_TRUE(VerifySnapshots(dir_.path(), 3, verify).ok()) << verify.str();
  // Round 3 resolved through round 2: round 2's weights but key 0 of each
  // shard, round 2's rows and the new ones.
  const auto two = LoadWholeRound(dir_.path(), 2);
  const auto three = LoadWholeRound(dir_.path(), 3);
  ASSERT_TRUE(two.ok() && three.ok()) << three.status().ToString();
  std::vector<float> expected = two->weights;
  expected[0] += 100;
  expected[layout_.shards()[1].dense.begin] += 100;
  EXPECT_EQ(three->weights, expected);
  EXPECT_EQ(three->sparse.size(), two->sparse.size() + 1);
  EXPECT_EQ(three->sparse.count(10), 1u);
  const std::string out_dir = dir_.path() + "/export3";
  std::ostringstream exported;
  ASSERT_TRUE(ExportSnapshot(dir_.path(), 3, out_dir, exported).ok());
  const std::string raw = ReadAll(out_dir + "/model.f32");
  ASSERT_EQ(raw.size(), expected.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(raw.data(), expected.data(), raw.size()), 0);
  // Without its parent the round cannot be read, and verify says why.
  {
    auto store = RocksDbStore::Open(ShardStoreDir(dir_.path(), 0));
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->DeleteRound(2).ok());
  }
  std::ostringstream broken;
  const Status bad = VerifySnapshots(dir_.path(), 3, broken);
  EXPECT_EQ(bad.code(), StatusCode::kCorruption);
  EXPECT_THAT(broken.str(),
              HasSubstr("round 3 shard 0: BAD: round 3 holds the changes "
                        "since round 2, which the store lacks"));
}

}  // namespace
}  // namespace lockstep
