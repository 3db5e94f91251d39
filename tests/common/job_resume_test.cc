#include "common/job_resume.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/job_fields.h"

namespace lockstep {
namespace {

namespace po = boost::program_options;
using ::testing::HasSubstr;

// The job flags of `args` as the launcher and the coordinator parse them.
po::variables_map Flags(std::vector<const char*> args) {
  po::options_description options;
  AddJobFlags(&options);
  args.insert(args.begin(), "lockstep");
  po::variables_map vm;
  po::store(po::parse_command_line(static_cast<int>(args.size()), args.data(),
                                   options),
            vm);
  po::notify(vm);
  return vm;
}

// The job of a run, as its manifest records it: resolved.
JobConfig Recorded() {
  JobConfig job;
  job.model = "mlp:32";
  job.workers = 2;
  job.epochs = 2;
  job.max_clocks = 3750;
  job.train_samples = 60000;
  job.input_dim = 784;
  job.classes = 10;
  job.lr = 0.05;
  return job;
}

TEST(JobResumeTest, OnlyTheFlagsGivenChangeTheRecordedJob) {
  auto job = ResumedJob(Flags({"--workers", "4", "--lr", "0.1"}), Recorded());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->workers, 4u);
  EXPECT_EQ(job->lr, 0.1);
  EXPECT_EQ(job->model, "mlp:32") << "not the flag's default";
  EXPECT_EQ(job->max_clocks, 3750) << "the run's length";
}

TEST(JobResumeTest, NewEpochsDeriveTheClockCountAnew) {
  auto epochs = ResumedJob(Flags({"--epochs", "4"}), Recorded());
  ASSERT_TRUE(epochs.ok()) << epochs.status().ToString();
  EXPECT_EQ(epochs->epochs, 4);
  EXPECT_EQ(epochs->max_clocks, 0) << "resolved again from the epochs";
  auto clocks =
      ResumedJob(Flags({"--epochs", "4", "--clocks", "5000"}), Recorded());
  ASSERT_TRUE(clocks.ok());
  EXPECT_EQ(clocks->max_clocks, 5000);
}

TEST(JobResumeTest, WhatARoundHoldsMayNotChangeAndIsNamed) {
  for (const auto& [flag, value] :
       std::vector<std::pair<const char*, const char*>>{
           {"--model", "mlp:64"},
           {"--optimizer", "adam"},
           {"--data", "synthetic"}}) {
    auto job = ResumedJob(Flags({flag, value}), Recorded());
    ASSERT_TRUE(job.ok()) << flag << ": composing is not checking";
    const Status refused = CheckResumeChanges(Recorded(), *job);
    EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(refused.message(), HasSubstr(std::string(flag) + " " + value +
                                             " cannot resume this run"));
    EXPECT_THAT(refused.message(), HasSubstr("drop " + std::string(flag)));
  }
  // The same value again is no change.
  auto same = ResumedJob(Flags({"--model", "mlp:32"}), Recorded());
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(CheckResumeChanges(Recorded(), *same).ok());
}

TEST(JobResumeTest, ResolvedDimensionsCountOnlyWhenBothAreKnown) {
  JobConfig unresolved = Recorded();
  unresolved.input_dim = 0;
  EXPECT_TRUE(CheckResumeChanges(Recorded(), unresolved).ok());
  JobConfig other_data = Recorded();
  other_data.input_dim = 100;
  const Status refused = CheckResumeChanges(Recorded(), other_data);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(),
              HasSubstr("input_dim is 100 where the run's was 784"));
}

}  // namespace
}  // namespace lockstep
