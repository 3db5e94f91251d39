// Snapshot rounds in whole jobs (threads of this process): a BSP job with
// global data order, resumed from any of its rounds, ends in the very state
// the uninterrupted job ends in — weights and optimizer state, dense and
// sparse, byte for byte, for every optimizer — also on a different number
// of servers (the round is re-sharded on load).
#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "snapshot_format/snapshot_manifest.h"
#include "tests/cluster/in_process_cluster.h"
#include "tests/support/temp_dir.h"
#include "tools/snapshot/whole_round.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

constexpr int kResumeClocks = 30;

// A small LIBSVM file: 600 rows of 1..8 features among 400 ids.
std::string WriteSparseData(const std::string& dir) {
  std::string path = dir + "/sparse.svm";
  std::ofstream out(path);
  std::mt19937 rng(5);
  for (int i = 0; i < 600; ++i) {
    std::map<int, float> features;
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < n; ++f) features[1 + static_cast<int>(rng() % 400)] = 1;
    out << ((features.begin()->first % 2) ? "+1" : "-1");
    for (const auto& [id, value] : features) out << ' ' << id << ':' << value;
    out << '\n';
  }
  return path;
}

JobConfig ResumeJob(const std::string& model, const std::string& optimizer,
                    const std::string& data, const std::string& dir) {
  JobConfig job;
  job.servers = 2;
  job.workers = 3;
  job.batches = {4, 8, 12};
  job.model = model;
  job.data = data;
  job.optimizer = optimizer;
  job.lr = optimizer == "adam" ? 0.01 : 0.05;
  job.max_clocks = kResumeClocks;
  job.eval_every = 0;
  job.seed = 11;
  // Liveness (10 heartbeats) far above what a sanitizer-slowed thread
  // can stall on a busy machine: nothing here is about dead peers.
  job.heartbeat_ms = 500;
  job.data_order = "global";
  job.snapshot_every_clocks = 10;
  job.snapshot_keep = 5;
  job.snapshot_dir = dir;
  return job;
}

// Bit-identical, compared as bytes so that -0 != 0 and NaN == NaN.
void ExpectSameFloats(const std::vector<float>& a, const std::vector<float>& b,
                      const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i]))
        << what << "[" << i << "]: " << a[i] << " vs " << b[i];
  }
}

struct ResumeCase {
  const char* model;
  const char* optimizer;
};

class SnapshotResumeTest : public ::testing::TestWithParam<ResumeCase> {};

TEST_P(SnapshotResumeTest, ResumedJobEndsInTheUninterruptedState) {
  const ResumeCase c = GetParam();
  TempDir tmp("snapshot-resume");
  const bool sparse = std::string(c.model) == "sparse-lr";
  const std::string data =
      sparse ? WriteSparseData(tmp.path())
             : "synthetic:samples=600:test=200:dim=10:classes=3";
  const std::string original = tmp.path() + "/original";
  InProcessJob whole;
  whole.job = ResumeJob(c.model, c.optimizer, data, original);
  whole.dump_model = tmp.path() + "/whole.bin";
  const InProcessResult ran = RunInProcess(whole);
  ASSERT_TRUE(ran.ok()) << ran.Failures();
  auto expected_dump = ReadModelFile(whole.dump_model);
  ASSERT_TRUE(expected_dump.ok()) << expected_dump.status().ToString();

  auto manifest = SnapshotManifest::Load(original);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  // Rounds after clocks 9, 19 (or later, when round 1 was still being
  // written then: a round is never started while one is in flight) and the
  // job's last, 29.
  std::vector<ManifestRound> rounds = manifest->rounds();
  ASSERT_GE(rounds.size(), 2u);
  for (const ManifestRound& r : rounds) {
    EXPECT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.shards, 2u);
  }
  EXPECT_EQ(rounds.front().clock, 9);
  ASSERT_EQ(rounds.back().clock, kResumeClocks - 1);
  auto expected = LoadWholeRound(original, rounds.back().round);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  EXPECT_EQ(expected->meta.clock, kResumeClocks - 1);
  EXPECT_EQ(expected->step, kResumeClocks);
  EXPECT_EQ(expected->sparse.empty(), !sparse);

  // Resume from each round before the last, on 2 and on 3 servers.
  rounds.pop_back();
  for (const ManifestRound& from : rounds) {
    const uint64_t round = from.round;
    for (const uint32_t servers : {2u, 3u}) {
      const std::string name =
          "resume-" + std::to_string(round) + "-" + std::to_string(servers);
      SCOPED_TRACE(name);
      const std::string copy = tmp.path() + "/" + name;
      std::filesystem::copy(original, copy,
                            std::filesystem::copy_options::recursive);
      InProcessJob resumed;
      resumed.job = ResumeJob(c.model, c.optimizer, data, copy);
      resumed.job.servers = servers;
      resumed.resume = true;
      resumed.resume_round = round;
      resumed.dump_model = copy + "/model.bin";
      const InProcessResult again = RunInProcess(resumed);
      ASSERT_TRUE(again.ok()) << again.Failures();
      auto dump = ReadModelFile(resumed.dump_model);
      ASSERT_TRUE(dump.ok()) << dump.status().ToString();
      ExpectSameFloats(*dump, *expected_dump, "the worker's final model");

      auto resumed_manifest = SnapshotManifest::Load(copy);
      ASSERT_TRUE(resumed_manifest.ok());
      const ManifestRound* last = resumed_manifest->LatestComplete();
      ASSERT_NE(last, nullptr);
      EXPECT_EQ(last->clock, kResumeClocks - 1);
      EXPECT_EQ(last->shards, servers);
      auto got = LoadWholeRound(copy, last->round);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(got->step, expected->step);
      ExpectSameFloats(got->weights, expected->weights, "dense weights");
      ExpectSameFloats(got->state, expected->state, "dense optimizer state");
      ASSERT_EQ(got->sparse.size(), expected->sparse.size());
      for (const auto& [id, row] : expected->sparse) {
        ExpectSameFloats(got->sparse[id], row,
                         "sparse row " + std::to_string(id));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ModelsAndOptimizers, SnapshotResumeTest,
                         ::testing::Values(ResumeCase{"mlp:8", "sgd"},
                                           ResumeCase{"mlp:8", "momentum"},
                                           ResumeCase{"mlp:8", "adam"},
                                           ResumeCase{"mlp:8", "adagrad"},
                                           ResumeCase{"sparse-lr", "adam"},
                                           ResumeCase{"sparse-lr", "adagrad"}),
                         [](const auto& info) {
                           std::string name = std::string(info.param.model) +
                                              "_" + info.param.optimizer;
                           for (char& ch : name) {
                             if (ch == ':' || ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace lockstep
