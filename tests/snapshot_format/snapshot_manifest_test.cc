#include "snapshot_format/snapshot_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

ManifestRound Round(uint64_t n, bool complete) {
  ManifestRound r;
  r.round = n;
  r.clock = static_cast<int64_t>(n) * 10 - 1;
  r.unix_time = 1.7e9 + static_cast<double>(n);
  r.shards = 2;
  r.complete = complete;
  r.error = complete ? "" : "shard 1: No space left on device";
  r.bytes = 1000 * n;
  return r;
}

TEST(SnapshotManifestTest, JsonRoundTripKeepsJobRoundsAndCuts) {
  JobConfig job;
  job.sync = "ssp:3";
  job.snapshot_dir = "/tmp/x";
  job.snapshot_every_clocks = 10;
  SnapshotManifest manifest(job);
  ManifestRound cut = Round(2, true);
  cut.contained[0] = {{0, 17}, {1, 15}};
  cut.contained[1] = {{0, 18}, {1, 15}};
  cut.policy = "lbbsp:analytical:narx";
  // Values JSON must carry bit for bit: a weight with all 53 bits, a
  // denormal, the largest exact count.
  cut.policy_state["model/0"] = {0.1 + 0.2, 4.9e-324, 9007199254740992.0};
  cut.policy_state["quota/0"] = {96};
  cut.train_s = 0.1 + 0.7;
  cut.samples = 12345;
  manifest.Record(cut);
  manifest.Record(Round(1, false));
  manifest.set_finished_clock(19);
  auto back = SnapshotManifest::FromJson(manifest.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->job(), job);
  EXPECT_EQ(back->finished_clock(), 19);
  ASSERT_EQ(back->rounds().size(), 2u);
  EXPECT_EQ(back->rounds()[0], Round(1, false));
  EXPECT_EQ(back->rounds()[1], cut);
}

TEST(SnapshotManifestTest, ANonFiniteStateValueComesBackAsNaN) {
  SnapshotManifest manifest{JobConfig{}};
  ManifestRound round = Round(1, true);
  round.policy = "lbbsp";
  round.policy_state["model/0"] = {std::nan(""), 1.5};
  manifest.Record(round);
  auto back = SnapshotManifest::FromJson(manifest.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const std::vector<double>& values =
      back->rounds()[0].policy_state.at("model/0");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_EQ(values[1], 1.5);
}

TEST(SnapshotManifestTest, RecordReplacesAndKeepsRoundOrder) {
  SnapshotManifest manifest;
  manifest.Record(Round(3, false));
  manifest.Record(Round(1, true));
  manifest.Record(Round(3, true));
  ASSERT_EQ(manifest.rounds().size(), 2u);
  EXPECT_EQ(manifest.rounds()[0].round, 1u);
  EXPECT_TRUE(manifest.rounds()[1].complete);
  EXPECT_EQ(manifest.LatestComplete()->round, 3u);
  EXPECT_EQ(manifest.Find(2), nullptr);
  EXPECT_EQ(manifest.NextRound(), 4u);
  EXPECT_EQ(manifest.NextRound(9), 9u);
  EXPECT_EQ(SnapshotManifest().NextRound(), 1u);
  EXPECT_EQ(SnapshotManifest().LatestComplete(), nullptr);
}

TEST(SnapshotManifestTest, LatestCompleteSkipsFailedRounds) {
  SnapshotManifest manifest;
  manifest.Record(Round(1, true));
  manifest.Record(Round(2, false));
  EXPECT_EQ(manifest.LatestComplete()->round, 1u);
}

TEST(SnapshotManifestTest, PruneKeepsTheNewestCompleteRounds) {
  SnapshotManifest manifest;
  for (uint64_t n = 1; n <= 6; ++n) manifest.Record(Round(n, n != 4));
  // Complete: 1 2 3 5 6. Keeping 3 keeps 3, (failed 4), 5, 6.
  EXPECT_EQ(manifest.Prune(3), 3u);
  std::vector<uint64_t> left;
  for (const auto& r : manifest.rounds()) left.push_back(r.round);
  EXPECT_EQ(left, (std::vector<uint64_t>{3, 4, 5, 6}));
  // Fewer complete rounds than asked for: nothing goes.
  EXPECT_EQ(manifest.Prune(10), 3u);
  EXPECT_EQ(manifest.rounds().size(), 4u);
}

TEST(SnapshotManifestTest, SaveAndLoadThroughTheFolder) {
  TempDir dir("manifest");
  EXPECT_EQ(SnapshotManifest::Load(dir.path()).status().code(),
            StatusCode::kNotFound);
  SnapshotManifest manifest;
  manifest.Record(Round(1, true));
  const std::string sub = dir.path() + "/new/folder";
  ASSERT_TRUE(manifest.Save(sub).ok());
  auto back = SnapshotManifest::Load(sub);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->rounds(), manifest.rounds());
}

TEST(SnapshotManifestTest, TornOrForeignFilesAreCorruption) {
  TempDir dir("manifest");
  const std::string path = dir.path() + "/" + kManifestFile;
  for (const std::string& text :
       {std::string("{\"format\": 1, \"job\": {}, \"rounds\": [{\"round\""),
        std::string("{\"format\": 99, \"job\": {}, \"rounds\": []}"),
        std::string("{\"format\": 1, \"job\": {\"lr\": \"-1\"}, "
                    "\"rounds\": []}")}) {
    std::ofstream(path, std::ios::trunc) << text;
    auto loaded = SnapshotManifest::Load(dir.path());
    EXPECT_EQ(loaded.status().code(), StatusCode::kCorruption) << text;
    EXPECT_THAT(loaded.status().message(), HasSubstr(path));
  }
}

// What a resume may ask of a manifest's job: not another model, and not
// nothing more of a job that ran to its end.
TEST(SnapshotManifestTest, AResumeChangesNoRoundsShapeAndTrainsFurther) {
  JobConfig job;
  job.model = "mlp:32";
  job.max_clocks = 300;
  job.input_dim = 784;
  SnapshotManifest manifest(job);
  manifest.Record(Round(30, true));
  EXPECT_TRUE(manifest.CheckResumableBy(job).ok()) << "stopped: resumable";
  JobConfig other = job;
  other.model = "mlp:64";
  const Status refused = manifest.CheckResumableBy(other);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(),
              HasSubstr("--model mlp:64 cannot resume this run: it was "
                        "mlp:32"));
  JobConfig other_data = job;
  other_data.input_dim = 100;
  EXPECT_THAT(manifest.CheckResumableBy(other_data).message(),
              HasSubstr("input_dim is 100 where the run's was 784"));
  // Ran to its end: the same length again would train nothing.
  manifest.set_finished_clock(299);
  EXPECT_THAT(manifest.CheckResumableBy(job).message(),
              HasSubstr("its job ran to its end (clock 299)"));
  JobConfig more_clocks = job;
  more_clocks.max_clocks = 400;
  JobConfig more_epochs = job;
  more_epochs.epochs = 9;
  JobConfig a_budget = job;
  a_budget.budget_s = 60;
  for (const JobConfig& more : {more_clocks, more_epochs, a_budget}) {
    EXPECT_TRUE(manifest.CheckResumableBy(more).ok());
  }
}

}  // namespace
}  // namespace lockstep
