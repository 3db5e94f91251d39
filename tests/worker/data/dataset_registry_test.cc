#include "worker/data/dataset_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "worker/data/synthetic_dataset.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

DataOptions Options(const std::string& spec) {
  DataOptions options;
  options.spec = spec;
  options.data_dir = "/usr/share/datasets/fashion-mnist";
  return options;
}

// What Probe promises is what Load delivers.
void ExpectProbeMatchesLoad(const DataOptions& options) {
  auto probed = ProbeDataset(options);
  ASSERT_TRUE(probed.ok()) << probed.status().ToString();
  auto loaded = LoadDataset(options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(*probed, (*loaded)->shape()) << options.spec;
  const Dataset& data = **loaded;
  const bool sparse = data.shape().sparse;
  for (Split split : {Split::kTrain, Split::kTest}) {
    EXPECT_EQ(data.dense(split) != nullptr, !sparse);
    EXPECT_EQ(data.sparse(split) != nullptr, sparse);
  }
  const uint64_t train = sparse ? data.sparse(Split::kTrain)->size
                                : data.dense(Split::kTrain)->size;
  EXPECT_EQ(train, data.shape().train_samples);
}

TEST(DatasetRegistryTest, FashionMnistProbeMatchesLoadWithLimits) {
  DataOptions options = Options("fashion-mnist");
  options.train_limit = 1200;
  options.test_limit = 300;
  ExpectProbeMatchesLoad(options);
  auto full = ProbeDataset(Options("fashion-mnist"));
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->train_samples, 60000u);
  EXPECT_EQ(full->test_samples, 10000u);
  EXPECT_EQ(full->input_dim, 784u);
  EXPECT_EQ(full->classes, 10u);
  EXPECT_FALSE(full->sparse);
}

TEST(DatasetRegistryTest, MissingFashionMnistFilesAreNamed) {
  DataOptions options = Options("fashion-mnist");
  options.data_dir = "/nonexistent";
  auto probed = ProbeDataset(options);
  ASSERT_FALSE(probed.ok());
  EXPECT_THAT(probed.status().message(), HasSubstr("/nonexistent"));
}

TEST(DatasetRegistryTest, ABarePathAndLibsvmPrefixAreLibsvmFiles) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("registry-" + std::to_string(getpid()) + ".svm");
  {
    std::ofstream out(path);
    for (int i = 0; i < 40; ++i) out << (i % 2) << " " << i + 1 << ":1\n";
  }
  ExpectProbeMatchesLoad(Options(path));
  ExpectProbeMatchesLoad(Options("libsvm:" + path));
  auto shape = ProbeDataset(Options(path));
  ASSERT_TRUE(shape.ok());
  EXPECT_TRUE(shape->sparse);
  EXPECT_EQ(shape->train_samples, 36u);  // 40 - 10% held out
  EXPECT_EQ(shape->test_samples, 4u);
  std::filesystem::remove(path);
}

TEST(DatasetRegistryTest, UnknownNamesListTheKnownForms) {
  auto unknown = ProbeDataset(Options("imagenet"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              AllOf(HasSubstr("imagenet"), HasSubstr("fashion-mnist"),
                    HasSubstr("synthetic"), HasSubstr("LIBSVM")));
}

TEST(DatasetRegistryTest, SyntheticIsDeterministicAndTakesItsArguments) {
  const DataOptions options =
      Options("synthetic:samples=300:test=50:dim=6:classes=3:seed=9");
  ExpectProbeMatchesLoad(options);
  auto a = LoadDataset(options);
  auto b = LoadDataset(options);
  auto other = LoadDataset(Options("synthetic:samples=300:dim=6:seed=10"));
  ASSERT_TRUE(a.ok() && b.ok() && other.ok());
  const DenseRows& rows = *(*a)->dense(Split::kTrain);
  EXPECT_EQ(rows.features, (*b)->dense(Split::kTrain)->features);
  EXPECT_EQ(rows.labels, (*b)->dense(Split::kTrain)->labels);
  EXPECT_NE(rows.features, (*other)->dense(Split::kTrain)->features);
  std::set<int32_t> classes(rows.labels.begin(), rows.labels.end());
  EXPECT_EQ(classes, (std::set<int32_t>{0, 1, 2}));
  for (const char* bad :
       {"synthetic:dim=0", "synthetic:classes=1", "synthetic:samples=x",
        "synthetic:size=4", "synthetic:dim=4:dim=5", "synthetic:dim"}) {
    EXPECT_FALSE(ProbeDataset(Options(bad)).ok()) << bad;
  }
}

TEST(DatasetRegistryTest, EveryFactoryIsListed) {
  EXPECT_EQ(KnownDatasets().size(), DatasetRegistry().entries().size());
  EXPECT_THAT(KnownDatasets(), ::testing::Contains("fashion-mnist"));
}

}  // namespace
}  // namespace lockstep
