#include "sync_policies/asp_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace lockstep {
namespace {

using ::testing::IsEmpty;

class AspPolicyTest : public ::testing::Test {
 protected:
  static void Report(AspPolicy* policy, uint32_t worker, int64_t clock) {
    ClockReport report;
    report.worker = worker;
    report.clock = clock;
    EXPECT_THAT(policy->OnClockDone(report), IsEmpty()) << "ASP commits";
  }
};

TEST_F(AspPolicyTest, NeverDefersHoweverFarAheadAWorkerRuns) {
  AspPolicy policy({32}, {});
  for (uint32_t w = 0; w < 3; ++w) policy.OnWorkerJoined(w, 0, {});
  for (int64_t c = 0; c < 100; ++c) {
    const auto decision = policy.Admit(0, c);
    ASSERT_TRUE(decision.has_value()) << "clock " << c;
    EXPECT_EQ(decision->clock, c);
    Report(&policy, 0, c);
  }
  EXPECT_EQ(policy.Metrics().at("lockstep_clock_gap"), 99);
}

TEST_F(AspPolicyTest, AWorkerThatIsNotLiveIsNotAdmitted) {
  AspPolicy policy({32}, {});
  EXPECT_FALSE(policy.Admit(4, 7).has_value());  // never joined
  policy.OnWorkerJoined(4, 0, {});
  const auto decision = policy.Admit(4, 7);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->clock, 7);
  EXPECT_EQ(decision->batch, 32u);
  policy.OnWorkerLeft(4);
  EXPECT_FALSE(policy.Admit(4, 8).has_value());  // removed
}

TEST_F(AspPolicyTest, RejoiningWorkerStartsAtTheSlowestLiveClock) {
  AspPolicy policy({32}, {});
  for (uint32_t w = 0; w < 3; ++w) policy.OnWorkerJoined(w, 0, {});
  for (int64_t c = 0; c < 6; ++c) Report(&policy, 0, c);
  for (int64_t c = 0; c < 4; ++c) Report(&policy, 1, c);
  EXPECT_THAT(policy.OnWorkerLeft(2), IsEmpty());
  EXPECT_EQ(policy.CurrentClock(), 4);
  policy.OnWorkerJoined(2, policy.CurrentClock(), {});
  EXPECT_EQ(policy.Admit(2, 0)->clock, 4);
}

TEST_F(AspPolicyTest, StalenessRuleIsPassedToServers) {
  StalenessRule rule;
  rule.scale_lr = true;
  rule.max_staleness = 4;
  AspPolicy policy({32}, rule);
  EXPECT_TRUE(policy.staleness_rule().scale_lr);
  EXPECT_EQ(policy.staleness_rule().max_staleness, 4);
  EXPECT_EQ(AspPolicy({32}, {}).staleness_rule().max_staleness, -1);
}

TEST_F(AspPolicyTest, NameReflectsTheRule) {
  EXPECT_EQ(AspPolicy({32}, {}).name(), "asp");
  EXPECT_EQ(AspPolicy({32}, {true, -1}).name(), "asp:scale");
  EXPECT_EQ(AspPolicy({32}, {false, 0}).name(), "asp:drop=0");
  EXPECT_EQ(AspPolicy({32}, {true, 8}).name(), "asp:scale:drop=8");
  EXPECT_EQ(AspPolicy({32}, {}).apply_mode(), ApplyMode::kOnArrival);
}

TEST_F(AspPolicyTest, MetricsShowPerWorkerClocks) {
  AspPolicy policy({32}, {true, 2});
  for (uint32_t w = 0; w < 2; ++w) policy.OnWorkerJoined(w, 0, {});
  Report(&policy, 1, 0);
  Report(&policy, 1, 1);
  const auto m = policy.Metrics();
  EXPECT_EQ(m.at("lockstep_worker_clock{worker=\"0\"}"), 0);
  EXPECT_EQ(m.at("lockstep_worker_clock{worker=\"1\"}"), 2);
  EXPECT_EQ(m.at("lockstep_asp_scale_lr"), 1);
  EXPECT_EQ(m.at("lockstep_asp_max_staleness"), 2);
}

}  // namespace
}  // namespace lockstep
