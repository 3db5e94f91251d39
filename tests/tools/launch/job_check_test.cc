#include "tools/launch/job_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class JobCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lockstep_job_check_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes a LIBSVM file of `lines` samples (plus blank lines, which do
  // not count) and returns its path.
  std::string WriteLibsvm(const std::string& name, int lines) {
    std::string path = (dir_ / name).string();
    std::ofstream out(path);
    for (int i = 0; i < lines; ++i) {
      out << (i % 2) << " " << (i + 1) << ":1 " << (7 * i + 3) << ":0.5\n";
      if (i % 5 == 0) out << "\n   \n";
    }
    return path;
  }

  static JobConfig Libsvm(const std::string& path) {
    JobConfig job;
    job.model = "sparse-lr";
    job.data = path;
    return job;
  }

  static JobConfig CheckOk(const JobConfig& job) {
    auto checked = CheckJob(job);
    EXPECT_TRUE(checked.ok()) << checked.status().ToString();
    return checked.ok() ? *checked : JobConfig();
  }

  static std::string CheckError(const JobConfig& job) {
    auto checked = CheckJob(job);
    EXPECT_FALSE(checked.ok());
    return checked.ok() ? "" : checked.status().message();
  }

  std::filesystem::path dir_;
};

TEST_F(JobCheckTest, DefaultsResolveFashionMnistFromItsHeaders) {
  const JobConfig c = CheckOk(JobConfig{});
  EXPECT_EQ(c.input_dim, 784u);
  EXPECT_EQ(c.classes, 10u);
  EXPECT_EQ(c.train_samples, 60000u);
  EXPECT_EQ(c.max_clocks, 2344);  // ceil(5 * 60000 / 128)
  EXPECT_EQ(c.data_order, "partition");
}

TEST_F(JobCheckTest, TrainLimitCapsTheSamplesUsedForClocks) {
  JobConfig job;
  job.train_limit = 1000;
  EXPECT_EQ(CheckOk(job).train_samples, 1000u);
  EXPECT_EQ(CheckOk(job).max_clocks, 40);  // ceil(5 * 1000 / 128 = 39.06)
  job.train_limit = 70000;
  EXPECT_EQ(CheckOk(job).train_samples, 60000u);
}

TEST_F(JobCheckTest, AutoDataOrderIsThePolicysChoice) {
  JobConfig job;
  job.sync = "lbbsp";
  EXPECT_EQ(CheckOk(job).data_order, "global");
  job.sync = "bsp";
  job.data_order = "global";
  EXPECT_EQ(CheckOk(job).data_order, "global");
}

TEST_F(JobCheckTest, EachRegistryNamesWhatItKnows) {
  JobConfig job;
  job.optimizer = "rmsprop";
  EXPECT_THAT(CheckError(job), AllOf(HasSubstr("'rmsprop'"), HasSubstr("sgd"),
                                     HasSubstr("adagrad")));
  job = JobConfig{};
  job.model = "resnet:50";
  EXPECT_THAT(CheckError(job), AllOf(HasSubstr("resnet:50"), HasSubstr("mlp"),
                                     HasSubstr("sparse-lr")));
  job = JobConfig{};
  job.data = "imagenet";
  EXPECT_THAT(CheckError(job),
              AllOf(HasSubstr("imagenet"), HasSubstr("fashion-mnist"),
                    HasSubstr("synthetic")));
  job = JobConfig{};
  job.sync = "gossip";
  EXPECT_THAT(CheckError(job), AllOf(HasSubstr("gossip"), HasSubstr("ssp:S")));
  job = JobConfig{};
  job.momentum = 1;
  EXPECT_THAT(CheckError(job), HasSubstr("momentum"));
}

TEST_F(JobCheckTest, ARobustAggregateNeedsAPolicyThatCommitsClocks) {
  JobConfig job;
  job.aggregate = "median";
  for (const char* sync : {"bsp", "backup:1", "lbbsp"}) {
    job.sync = sync;
    CheckOk(job);
  }
  for (const char* sync : {"ssp:2", "asp"}) {
    job.sync = sync;
    EXPECT_THAT(CheckError(job), AllOf(HasSubstr("--aggregate median"),
                                       HasSubstr("applies each on arrival")))
        << sync;
  }
  job.aggregate = "middle";
  job.sync = "bsp";
  EXPECT_THAT(CheckError(job), HasSubstr("--aggregate must be"));
}

TEST_F(JobCheckTest, ModelsRefuseDataTheyCannotTrainOn) {
  JobConfig sparse_on_dense;
  sparse_on_dense.model = "sparse-lr";
  EXPECT_THAT(CheckError(sparse_on_dense),
              AllOf(HasSubstr("sparse-lr"), HasSubstr("sparse rows")));
  std::string path = WriteLibsvm("dense.svm", 20);
  for (const char* model : {"softmax", "mlp:8"}) {
    JobConfig job = Libsvm(path);
    job.model = model;
    EXPECT_THAT(CheckError(job), HasSubstr("dense rows")) << model;
  }
}

TEST_F(JobCheckTest, LibsvmHoldsOutTheLastTenthForTesting) {
  struct Case {
    int lines;
    uint64_t train;
  };
  // lines - floor(lines * 0.1)
  for (const Case c : {Case{25, 23}, Case{9, 9}, Case{10, 9}, Case{100, 90},
                       Case{1234, 1111}}) {
    SCOPED_TRACE("lines=" + std::to_string(c.lines));
    JobConfig job =
        Libsvm(WriteLibsvm("data" + std::to_string(c.lines) + ".svm", c.lines));
    job.workers = 2;
    job.batches = {4};
    job.epochs = 1;
    const JobConfig checked = CheckOk(job);
    EXPECT_EQ(checked.train_samples, c.train);
    EXPECT_EQ(checked.classes, 2u);
    EXPECT_EQ(checked.max_clocks,
              static_cast<int64_t>((c.train + 7) / 8));  // ceil(train / 8)
  }
}

TEST_F(JobCheckTest, LibsvmWithSeparateTestFileTrainsOnEveryLine) {
  JobConfig job = Libsvm(WriteLibsvm("train.svm", 25));
  job.test_data = WriteLibsvm("test.svm", 5);
  EXPECT_EQ(CheckOk(job).train_samples, 25u);
}

TEST_F(JobCheckTest, MissingOrEmptyLibsvmFileIsAnError) {
  auto missing = CheckJob(Libsvm((dir_ / "nope.svm").string()));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.svm"));
  EXPECT_THAT(CheckError(Libsvm(WriteLibsvm("empty.svm", 0))),
              HasSubstr("empty"));
}

TEST_F(JobCheckTest, SyntheticDataNeedsNoFiles) {
  JobConfig job;
  job.data = "synthetic:samples=640:dim=12:classes=3";
  job.model = "mlp:8";
  const JobConfig c = CheckOk(job);
  EXPECT_EQ(c.train_samples, 640u);
  EXPECT_EQ(c.input_dim, 12u);
  EXPECT_EQ(c.classes, 3u);
  EXPECT_EQ(c.max_clocks, 25);  // 5 epochs * 640 / 128
}

}  // namespace
}  // namespace lockstep
