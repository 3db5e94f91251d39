// The conformance suite: every sync policy, built from its spec by the
// registry, runs through the same simulated scenarios (uneven speeds, a
// worker dying, a worker re-joining, equal and unequal batches, GPU-like
// workers with caps, random churn) while PolicyReferee checks each of its
// decisions against its family's rule; no scenario may deadlock. LB-BSP
// must also balance: the analytical method reaches the speed-proportional
// split, the numerical one equal compute times.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "common/job_config.h"
#include "sync_policies/policy_metric_families.h"
#include "sync_policies/policy_registry.h"
#include "tests/support/param_names.h"
#include "tests/sync_policies/policy_referee.h"
#include "tests/sync_policies/policy_simulator.h"
#include "tests/test_seed.h"

namespace lockstep {
namespace {

using sim::PolicyReferee;
using sim::PolicySimulator;
using sim::RefereeSpec;
using sim::SimScenario;

// Analytical quotas count as proportional within this share (or 1 sample).
constexpr double kProportionalTolerance = 0.05;
constexpr int64_t kProportionalWithinClocks = 10;
// Numerical balance: (slowest - fastest) / slowest compute time.
constexpr double kBalanceTolerance = 0.10;

class ConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  // The family and parameters of GetParam(), read off a policy built
  // through the registry.
  RefereeSpec Spec() const {
    JobConfig config;
    config.sync = GetParam();
    config.workers = 8;
    auto policy = CreateSyncPolicy(config);
    EXPECT_TRUE(policy.ok()) << policy.status().ToString();
    return policy.ok() ? RefereeSpec::Of(**policy) : RefereeSpec{};
  }
  bool IsLbBsp() const { return Spec().kind == RefereeSpec::Kind::kLbBsp; }
  bool IsNumerical() const {
    return IsLbBsp() && Spec().lbbsp.method == LbBspOptions::Method::kNumerical;
  }
  bool IsAnalytical() const { return IsLbBsp() && !IsNumerical(); }

  // Builds the policy through the registry and runs `scenario` under the
  // referee. Fatal failure on any broken rule or a stuck simulation.
  void Run(const SimScenario& scenario) {
    SCOPED_TRACE(scenario.name);
    JobConfig config;
    config.sync = GetParam();
    config.workers = static_cast<uint32_t>(scenario.workers.size());
    config.batches = scenario.batches;
    config.seed = 7;
    global_batch_ = config.GlobalBatch();
    auto policy = CreateSyncPolicy(config);
    ASSERT_TRUE(policy.ok()) << policy.status().ToString();
    policy_ = std::move(*policy);
    referee_ = std::make_unique<PolicyReferee>(
        policy_.get(), RefereeSpec::Of(*policy_), scenario, global_batch_);
    PolicySimulator simulator(policy_.get(), scenario, referee_.get());
    ASSERT_TRUE(simulator.Run());
    // Every figure it publishes is of a family /metrics can describe.
    for (const auto& [series, value] : policy_->Metrics()) {
      const std::string family = series.substr(0, series.find('{'));
      EXPECT_NE(FindPolicyMetricFamily(family), nullptr)
          << series << " has no entry in policy_metric_families.cc";
    }
    if (Spec().kind != RefereeSpec::Kind::kSsp &&
        Spec().kind != RefereeSpec::Kind::kAsp) {
      EXPECT_EQ(referee_->committed(), scenario.clocks - 1);
    }
  }

  // The first clock from which every quota stays within tolerance of the
  // speed-proportional split x_w = X (1/b_w) / sum(1/b) (with a common
  // fixed cost this is also the equal-finish-time split).
  int64_t ClocksToProportional(const SimScenario& s) const {
    double inverse_sum = 0;
    for (const auto& w : s.workers) inverse_sum += 1 / w.per_sample_s;
    int64_t since = s.clocks;
    for (int64_t c = s.clocks - 1; c >= 0; --c) {
      auto it = referee_->admissions().find(c);
      if (it == referee_->admissions().end()) break;
      const auto& admitted = it->second;
      bool ok = admitted.size() == s.workers.size();
      for (const auto& [w, d] : admitted) {
        const double target =
            global_batch_ / s.workers[w].per_sample_s / inverse_sum;
        ok = ok && std::abs(d.batch - target) <=
                       std::max(kProportionalTolerance * target, 1.0);
      }
      if (!ok) break;
      since = c;
    }
    return since;
  }

  // The first clock from which every clock's compute times stay within
  // kBalanceTolerance of each other.
  int64_t ClocksToBalance(const SimScenario& s) const {
    int64_t since = s.clocks;
    for (int64_t c = s.clocks - 1; c >= 0; --c) {
      auto it = referee_->compute_s().find(c);
      if (it == referee_->compute_s().end()) break;
      double slowest = 0;
      double fastest = 1e300;
      for (const auto& [w, t] : it->second) {
        slowest = std::max(slowest, t);
        fastest = std::min(fastest, t);
      }
      if ((slowest - fastest) / slowest > kBalanceTolerance) break;
      since = c;
    }
    return since;
  }

  void ExpectBalanced(const SimScenario& s) {
    if (IsAnalytical()) {
      const int64_t since = ClocksToProportional(s);
      std::cout << "[ RESULT   ] " << GetParam() << " " << s.name
                << ": quotas within 5% of the proportional split from clock "
                << since << std::endl;
      EXPECT_LE(since, kProportionalWithinClocks);
    }
    if (IsNumerical()) {
      const int64_t since = ClocksToBalance(s);
      std::cout << "[ RESULT   ] " << GetParam() << " " << s.name
                << ": compute times within 10% from clock " << since
                << " (moves "
                << policy_->Metrics().at("lockstep_lbbsp_moves_total")
                << ", final step "
                << policy_->Metrics().at("lockstep_lbbsp_step") << ", window "
                << policy_->Metrics().at("lockstep_lbbsp_window") << ")"
                << std::endl;
      EXPECT_LE(since, s.clocks - 20) << "numerical search did not converge";
    }
  }

  uint64_t global_batch_ = 0;
  std::unique_ptr<SyncPolicy> policy_;
  std::unique_ptr<PolicyReferee> referee_;
};

TEST_P(ConformanceTest, UnevenSpeedsKeepTheRuleAndBalance) {
  const SimScenario s = sim::UnevenSpeedsScenario();
  ASSERT_NO_FATAL_FAILURE(Run(s));
  ExpectBalanced(s);
}

TEST_P(ConformanceTest, DeadWorkerNeverBlocksTheOthers) {
  ASSERT_NO_FATAL_FAILURE(Run(sim::WorkerDiesScenario()));
  EXPECT_EQ(referee_->admissions().rbegin()->second.count(2), 0u);
}

TEST_P(ConformanceTest, RejoiningWorkerRunsAgainFromTheCurrentClock) {
  const SimScenario s = sim::WorkerRejoinsScenario();
  ASSERT_NO_FATAL_FAILURE(Run(s));
  // The referee checked that its first admission was at the current
  // clock; it must have kept up to the end.
  EXPECT_EQ(referee_->admissions().at(s.clocks).count(1), 1u);
}

TEST_P(ConformanceTest, WorkerBackWithinAClockReportsItAgain) {
  const SimScenario s = sim::QuickRejoinsScenario();
  ASSERT_NO_FATAL_FAILURE(Run(s));
  EXPECT_EQ(referee_->admissions().at(s.clocks).count(0), 1u);
}

TEST_P(ConformanceTest, JobSurvivesEveryWorkerDyingAndComingBack) {
  const SimScenario s = sim::TotalOutageScenario();
  ASSERT_NO_FATAL_FAILURE(Run(s));
  EXPECT_EQ(referee_->admissions().at(s.clocks).size(), 4u);
}

TEST_P(ConformanceTest, EqualBatchesKeepTheRule) {
  ASSERT_NO_FATAL_FAILURE(Run(sim::EqualBatchesScenario()));
}

TEST_P(ConformanceTest, UnequalBatchesKeepTheRule) {
  ASSERT_NO_FATAL_FAILURE(Run(sim::UnequalBatchesScenario()));
}

TEST_P(ConformanceTest, GpuWorkersNeverExceedTheirCaps) {
  const SimScenario s = sim::GpuCapsScenario();
  ASSERT_NO_FATAL_FAILURE(Run(s));
  if (IsNumerical()) ExpectBalanced(s);
}

TEST_P(ConformanceTest, RandomChurnNeverBreaksTheRule) {
  const uint64_t seed = TestSeed();
  for (uint64_t i = 0; i < 5; ++i) {
    SCOPED_TRACE("scenario seed " + std::to_string(seed + i));
    ASSERT_NO_FATAL_FAILURE(Run(sim::RandomChurnScenario(seed + i)));
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllPolicies, ConformanceTest,
    ::testing::Values("bsp", "ssp:0", "ssp:3", "asp", "asp:scale:drop=4",
                      "backup:0", "backup:1", "lbbsp:analytical:last",
                      "lbbsp:analytical:ema", "lbbsp:analytical:narx",
                      "lbbsp:numerical", "lbbsp:analytical:ema:min=8:max=120"),
    PolicyParamName());

}  // namespace
}  // namespace lockstep
