#include "worker/data/sparse_data_generator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "worker/data/libsvm_loader.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class SparseDataGeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sparse_data_generator_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `spec` to `name`, printing the seed, and loads it back.
  SparseRows Generate(const SparseDataSpec& spec, const std::string& name,
                      SyntheticLibsvmStats* stats = nullptr) {
    std::cout << "seed=" << spec.seed << " samples=" << spec.samples
              << " features=" << spec.features << "\n";
    const std::string path = Path(name);
    const Status written = WriteSyntheticLibsvm(spec, path, stats);
    EXPECT_TRUE(written.ok()) << written.ToString();
    auto data = LoadLibsvm(path, 0, 0);
    EXPECT_TRUE(data.ok()) << data.status().ToString();
    return data.ok() ? std::move(data).value() : SparseRows();
  }
  std::string Path(const std::string& name) const {
    return (dir_ / name).string();
  }

  fs::path dir_;
};

TEST_F(SparseDataGeneratorTest, SameSeedWritesIdenticalBytes) {
  const SparseDataSpec spec{.samples = 2000,
                            .features = 5000,
                            .nnz_per_sample = 8,
                            .zipf_exponent = 1.1,
                            .seed = 42};
  SCOPED_TRACE("seed=42");
  std::cout << "seed=42 (other: 43)\n";
  ASSERT_TRUE(WriteSyntheticLibsvm(spec, Path("a.svm")).ok());
  ASSERT_TRUE(WriteSyntheticLibsvm(spec, Path("b.svm")).ok());
  SparseDataSpec other = spec;
  other.seed = 43;
  ASSERT_TRUE(WriteSyntheticLibsvm(other, Path("c.svm")).ok());
  const std::string a = ReadAll(Path("a.svm"));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, ReadAll(Path("b.svm")));
  EXPECT_NE(a, ReadAll(Path("c.svm")));
  EXPECT_FALSE(fs::exists(Path("a.svm.tmp")));
}

TEST_F(SparseDataGeneratorTest, FileLoadsBackWithDistinctIdsInRange) {
  const SparseDataSpec spec{.samples = 3000,
                            .features = 700,
                            .nnz_per_sample = 12,
                            .zipf_exponent = 1.1,
                            .seed = 7};
  SCOPED_TRACE("seed=7");
  const SparseRows data = Generate(spec, "load.svm");
  ASSERT_EQ(data.size, 3000u);
  ASSERT_EQ(data.row_offsets.size(), 3001u);
  for (uint64_t i = 0; i < data.size; ++i) {
    ASSERT_EQ(data.row_offsets[i + 1] - data.row_offsets[i], 12u) << i;
  }
  for (uint64_t id : data.feature_ids) ASSERT_LT(id, 700u);
  for (float value : data.values) ASSERT_EQ(value, 1.0f);
  EXPECT_LT(data.max_feature, 700u);
}

TEST_F(SparseDataGeneratorTest, FeatureFrequenciesFollowPowerLaw) {
  const SparseDataSpec spec{.samples = 100000,
                            .features = 100000,
                            .nnz_per_sample = 20,
                            .zipf_exponent = 1.1,
                            .seed = 11};
  SCOPED_TRACE("seed=11");
  const SparseRows data = Generate(spec, "zipf.svm");
  std::vector<uint64_t> counts(spec.features, 0);
  for (uint64_t id : data.feature_ids) ++counts[id];
  std::cout << "count[0]=" << counts[0] << " count[99]=" << counts[99]
            << " count[999]=" << counts[999] << " count[1000]=" << counts[1000]
            << "\n";
  EXPECT_GT(counts[0], 50 * counts[1000]);
  EXPECT_GT(counts[0], counts[1]);
  // Ranks 100 and 1000 are far from saturation, so their ratio should be
  // close to 10^1.1 = 12.6.
  ASSERT_GT(counts[999], 0u);
  const double ratio = static_cast<double>(counts[99]) / counts[999];
  EXPECT_GT(ratio, 8.0);
  EXPECT_LT(ratio, 20.0);
}

TEST_F(SparseDataGeneratorTest, LabelsAreMixedAndBayesAccuracyIsHigh) {
  const SparseDataSpec spec{.samples = 20000,
                            .features = 2000,
                            .nnz_per_sample = 10,
                            .zipf_exponent = 1.1,
                            .seed = 5};
  SCOPED_TRACE("seed=5");
  SyntheticLibsvmStats stats;
  const SparseRows data = Generate(spec, "labels.svm", &stats);
  uint64_t positives = 0;
  for (float label : data.labels) positives += label > 0.5f ? 1 : 0;
  EXPECT_EQ(positives, stats.positives);
  EXPECT_GT(positives, data.size * 3 / 10);
  EXPECT_LT(positives, data.size * 7 / 10);
  EXPECT_GE(stats.bayes_accuracy, 0.8);
}

// Plain logistic-regression SGD on the generated data must beat chance by
// a wide margin on held-out samples: the hidden model is learnable.
TEST_F(SparseDataGeneratorTest, LogisticRegressionLearnsTheHiddenModel) {
  const SparseDataSpec spec{.samples = 24000,
                            .features = 1000,
                            .nnz_per_sample = 10,
                            .zipf_exponent = 1.1,
                            .seed = 3};
  SCOPED_TRACE("seed=3");
  const SparseRows data = Generate(spec, "learn.svm");
  ASSERT_EQ(data.size, 24000u);
  const uint64_t train = 20000;
  std::vector<double> w(spec.features, 0.0);
  double bias = 0;
  auto logit = [&](uint64_t i) {
    double z = bias;
    for (uint64_t e = data.row_offsets[i]; e < data.row_offsets[i + 1]; ++e) {
      z += w[data.feature_ids[e]] * data.values[e];
    }
    return z;
  };
  for (int epoch = 0; epoch < 10; ++epoch) {
    for (uint64_t i = 0; i < train; ++i) {
      const double g = 1.0 / (1.0 + std::exp(-logit(i))) - data.labels[i];
      for (uint64_t e = data.row_offsets[i]; e < data.row_offsets[i + 1]; ++e) {
        w[data.feature_ids[e]] -= 0.1 * g * data.values[e];
      }
      bias -= 0.1 * g;
    }
  }
  uint64_t correct = 0;
  for (uint64_t i = train; i < data.size; ++i) {
    correct += (logit(i) > 0) == (data.labels[i] > 0.5f) ? 1 : 0;
  }
  const double accuracy = static_cast<double>(correct) / (data.size - train);
  std::cout << "held-out accuracy=" << accuracy << "\n";
  EXPECT_GT(accuracy, 0.75);
}

TEST_F(SparseDataGeneratorTest, RejectsInvalidSpecs) {
  const SparseDataSpec good{.samples = 10,
                            .features = 10,
                            .nnz_per_sample = 3,
                            .zipf_exponent = 1.1,
                            .seed = 1};
  EXPECT_TRUE(WriteSyntheticLibsvm(good, Path("good.svm")).ok());
  SparseDataSpec bad = good;
  bad.samples = 0;
  EXPECT_EQ(WriteSyntheticLibsvm(bad, Path("x.svm")).code(),
            StatusCode::kInvalidArgument);
  bad = good;
  bad.nnz_per_sample = 11;
  EXPECT_EQ(WriteSyntheticLibsvm(bad, Path("x.svm")).code(),
            StatusCode::kInvalidArgument);
  bad = good;
  bad.zipf_exponent = 0;
  EXPECT_EQ(WriteSyntheticLibsvm(bad, Path("x.svm")).code(),
            StatusCode::kInvalidArgument);
  bad = good;
  bad.zipf_exponent = NAN;
  EXPECT_EQ(WriteSyntheticLibsvm(bad, Path("x.svm")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(Path("x.svm")));
}

TEST_F(SparseDataGeneratorTest, NnzEqualToFeaturesStillTerminates) {
  const SparseDataSpec spec{.samples = 50,
                            .features = 30,
                            .nnz_per_sample = 30,
                            .zipf_exponent = 2.0,
                            .seed = 9};
  SCOPED_TRACE("seed=9");
  const SparseRows data = Generate(spec, "full.svm");
  EXPECT_EQ(data.feature_ids.size(), 50u * 30u);
}

TEST_F(SparseDataGeneratorTest, UnwritablePathIsIOError) {
  const SparseDataSpec spec{.samples = 10,
                            .features = 10,
                            .nnz_per_sample = 3,
                            .zipf_exponent = 1.1,
                            .seed = 1};
  const Status status = WriteSyntheticLibsvm(spec, Path("no_such_dir/out.svm"));
  EXPECT_EQ(status.code(), StatusCode::kIOError);
  EXPECT_NE(status.message().find("no_such_dir"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
