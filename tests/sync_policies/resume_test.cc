// Every policy continues a job resumed from a round at clock c: workers
// start at c + 1 whatever they ask for, and the clock after it commits.
#include <gtest/gtest.h>

#include "common/job_config.h"
#include "sync_policies/policy_registry.h"
#include "tests/support/param_names.h"

namespace lockstep {
namespace {

class PolicyResumeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyResumeTest, WorkersStartAtTheResumedClock) {
  JobConfig job;
  job.sync = GetParam();
  job.workers = 3;
  job.batches = {8};
  auto policy = CreateSyncPolicy(job);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  SyncPolicy& p = **policy;
  p.ResumeAt(20);
  for (uint32_t w = 0; w < 3; ++w) p.OnWorkerJoined(w, 0, WorkerCaps{});
  EXPECT_EQ(p.CurrentClock(), 20);
  std::vector<AdmissionDecision> admitted;
  for (uint32_t w = 0; w < 3; ++w) {
    auto decision = p.Admit(w, 0);
    ASSERT_TRUE(decision) << "worker " << w;
    EXPECT_EQ(decision->clock, 20);
    EXPECT_GT(decision->batch, 0u);
    admitted.push_back(*decision);
  }
  std::vector<CommitDecision> commits;
  for (uint32_t w = 0; w < 3; ++w) {
    ClockReport report;
    report.worker = w;
    report.clock = 20;
    report.batch = admitted[w].batch;
    report.compute_s = 0.01;
    for (auto& c : p.OnClockDone(report)) commits.push_back(c);
  }
  if (p.apply_mode() == ApplyMode::kOnCommit) {
    ASSERT_EQ(commits.size(), 1u);
    EXPECT_EQ(commits[0].clock, 20);
  }
  EXPECT_EQ(p.CurrentClock(), 21);
}

INSTANTIATE_TEST_SUITE_P(Policies, PolicyResumeTest,
                         ::testing::Values("bsp", "ssp:2", "asp", "backup:1",
                                           "lbbsp", "lbbsp:numerical"),
                         PolicyParamName());

}  // namespace
}  // namespace lockstep
