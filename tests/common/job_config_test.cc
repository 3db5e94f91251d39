#include "common/job_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

DataShape Data(uint64_t train_samples) {
  DataShape data;
  data.input_dim = 784;
  data.classes = 10;
  data.train_samples = train_samples;
  data.test_samples = 100;
  return data;
}

JobConfig Resolved(JobConfig c, uint64_t train_samples) {
  EXPECT_TRUE(ResolveJob(Data(train_samples), &c).ok());
  return c;
}

TEST(JobConfigTest, ResolveFillsTheDataFieldsAndDerivesClocks) {
  const JobConfig c = Resolved(JobConfig{}, 60000);
  EXPECT_EQ(c.input_dim, 784u);
  EXPECT_EQ(c.classes, 10u);
  EXPECT_EQ(c.train_samples, 60000u);
  EXPECT_EQ(c.GlobalBatch(), 128u);  // 4 workers x 32
  // ceil(5 * 60000 / 128) = ceil(2343.75)
  EXPECT_EQ(c.max_clocks, 2344);
  EXPECT_TRUE(c.resolved());
  EXPECT_FALSE(JobConfig{}.resolved());
}

TEST(JobConfigTest, ClocksAreEpochsTimesSamplesOverGlobalBatch) {
  struct Case {
    uint32_t workers;
    std::vector<uint32_t> batches;
    double epochs;
    int64_t clocks;
  };
  const Case cases[] = {
      {3, {50}, 1, 400},     // exactly 60000 / 150
      {7, {13}, 0.5, 330},   // ceil(30000 / 91 = 329.67)
      {1, {60000}, 2, 2},    // one clock per epoch
      {2, {64}, 0.0001, 1},  // at least one clock
      {4, {10, 20, 30, 40}, 3, 1800},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("workers=" + std::to_string(c.workers));
    JobConfig config;
    config.workers = c.workers;
    config.batches = c.batches;
    config.epochs = c.epochs;
    EXPECT_EQ(Resolved(config, 60000).max_clocks, c.clocks);
  }
}

TEST(JobConfigTest, ExplicitClocksOverrideEpochs) {
  JobConfig c;
  c.max_clocks = 77;
  c.epochs = 100;
  EXPECT_EQ(Resolved(c, 60000).max_clocks, 77);
}

TEST(JobConfigTest, ResolveRefusesAnEmptyDataSetAndAbsurdEpochs) {
  JobConfig c;
  EXPECT_THAT(ResolveJob(Data(0), &c).message(), HasSubstr("empty"));
  for (double epochs : {1e300, std::nan(""), 0.0, -1.0}) {
    JobConfig bad;
    bad.epochs = epochs;
    EXPECT_THAT(ResolveJob(Data(60000), &bad).message(), HasSubstr("--epochs"))
        << epochs;
  }
}

TEST(JobConfigTest, PerWorkerBatchListGivesEachWorkerItsBatch) {
  JobConfig c;
  c.batches = {16, 16, 32, 64};
  EXPECT_EQ(c.BatchOf(0), 16u);
  EXPECT_EQ(c.BatchOf(3), 64u);
  EXPECT_EQ(c.GlobalBatch(), 128u);
  JobConfig one;
  one.workers = 5;
  one.batches = {24};
  EXPECT_EQ(one.BatchOf(4), 24u);
  EXPECT_EQ(one.GlobalBatch(), 120u);
}

TEST(JobConfigTest, ParseBatchListAcceptsOneOrManySizes) {
  EXPECT_EQ(*ParseBatchList("32"), std::vector<uint32_t>{32});
  EXPECT_EQ(*ParseBatchList("1,16777216,7"),
            (std::vector<uint32_t>{1, 1u << 24, 7}));
}

TEST(JobConfigTest, ParseBatchListRejectsMalformedLists) {
  for (const char* text :
       {"", "abc", "16,,32", ",16", "0", "16,0", "-4", "16x", "16 ", "3.5",
        "16777217", "99999999999999999999999", "16,32,", "16,"}) {
    SCOPED_TRACE(std::string("'") + text + "'");
    auto parsed = ParseBatchList(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("--batch"));
  }
}

TEST(JobConfigTest, ValidateChecksCountsRatesAndTimingWithTheFlagName) {
  struct Case {
    void (*edit)(JobConfig*);
    const char* flag;
  };
  const Case cases[] = {
      {[](JobConfig* c) { c->servers = 0; }, "--servers"},
      {[](JobConfig* c) { c->servers = 1025; }, "--servers"},
      {[](JobConfig* c) { c->workers = 4097; }, "--workers"},
      {[](JobConfig* c) {
         c->batches = {16, 32};
       },
       "--batch lists 2 sizes"},
      {[](JobConfig* c) { c->lr = 0; }, "--lr"},
      {[](JobConfig* c) { c->lr = -0.1; }, "--lr"},
      {[](JobConfig* c) { c->lr = INFINITY; }, "--lr"},
      {[](JobConfig* c) { c->eval_every = -1; }, "--eval-every"},
      {[](JobConfig* c) { c->target_accuracy = 1.5; }, "--target-accuracy"},
      {[](JobConfig* c) { c->budget_s = -1; }, "--budget-s"},
      {[](JobConfig* c) { c->budget_s = NAN; }, "--budget-s"},
      {[](JobConfig* c) { c->heartbeat_ms = 9; }, "--heartbeat-ms"},
      {[](JobConfig* c) { c->data_order = "random"; }, "--data-order"},
      {[](JobConfig* c) { c->lr_schedule = "step:0:0.5"; }, "--lr-schedule"},
      {[](JobConfig* c) { c->model = ""; }, "--model"},
      {[](JobConfig* c) { c->sync = ""; }, "--sync"},
  };
  for (const Case& c : cases) {
    JobConfig config;
    c.edit(&config);
    EXPECT_THAT(ValidateJobConfig(config).message(), HasSubstr(c.flag));
  }
  EXPECT_TRUE(ValidateJobConfig(JobConfig{}).ok());
}

TEST(JobConfigTest, MaxWorkersIsAtLeastWorkersAndNeedsTheGlobalOrder) {
  JobConfig c;
  c.workers = 4;
  EXPECT_EQ(c.MaxWorkers(), 4u);  // 0: the job's own size
  c.max_workers = 6;
  c.data_order = "global";
  EXPECT_TRUE(ValidateJobConfig(c).ok());
  EXPECT_EQ(c.MaxWorkers(), 6u);
  // A policy's order is not known yet: the coordinator checks it resolved.
  c.data_order = "auto";
  EXPECT_TRUE(ValidateJobConfig(c).ok());
  c.data_order = "partition";
  EXPECT_THAT(ValidateJobConfig(c).message(), HasSubstr("--data-order global"));
  c.data_order = "global";
  c.max_workers = 3;
  EXPECT_THAT(ValidateJobConfig(c).message(), HasSubstr("--max-workers"));
  c.max_workers = 4097;
  EXPECT_THAT(ValidateJobConfig(c).message(), HasSubstr("--max-workers"));
}

TEST(JobConfigTest, ThePushGuardsSettingsAreChecked) {
  JobConfig c;
  EXPECT_TRUE(ValidateJobConfig(c).ok());
  c.max_grad_norm = 10;
  c.grad_norm_action = "clip";
  EXPECT_TRUE(ValidateJobConfig(c).ok());
  c.grad_norm_action = "ignore";
  EXPECT_THAT(ValidateJobConfig(c).message(),
              HasSubstr("--grad-norm-action must be reject or clip"));
  c.grad_norm_action = "reject";
  for (double bad : std::vector<double>{-1.0, NAN, INFINITY}) {
    c.max_grad_norm = bad;
    EXPECT_THAT(ValidateJobConfig(c).message(), HasSubstr("--max-grad-norm"));
  }
  c.max_grad_norm = 0;
  for (double off_or_fine : {0.0, 2.0, 1e6}) {
    c.norm_outlier_factor = off_or_fine;
    EXPECT_TRUE(ValidateJobConfig(c).ok()) << off_or_fine;
  }
  for (double bad : std::vector<double>{1.5, -1.0, NAN, INFINITY}) {
    c.norm_outlier_factor = bad;
    EXPECT_THAT(ValidateJobConfig(c).message(),
                HasSubstr("--norm-outlier-factor"));
  }
}

TEST(JobConfigTest, ValidateRejectsNonPositiveEpochsWithoutClocks) {
  JobConfig c;
  c.epochs = 0;
  EXPECT_THAT(ValidateJobConfig(c).message(), HasSubstr("--epochs"));
  c.max_clocks = 10;
  EXPECT_TRUE(ValidateJobConfig(c).ok());
}

}  // namespace
}  // namespace lockstep
