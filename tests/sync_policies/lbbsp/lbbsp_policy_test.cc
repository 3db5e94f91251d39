#include "sync_policies/lbbsp/lbbsp_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;

class LbBspPolicyTest : public ::testing::Test {
 protected:
  static LbBspOptions Analytical(PredictorKind kind = PredictorKind::kLast) {
    LbBspOptions options;
    options.predictor = kind;
    return options;
  }
  static LbBspOptions Numerical() {
    LbBspOptions options;
    options.method = LbBspOptions::Method::kNumerical;
    return options;
  }

  static void JoinAll(LbBspPolicy* policy, uint32_t workers) {
    for (uint32_t w = 0; w < workers; ++w) policy->OnWorkerJoined(w, 0, {});
  }

  static ClockReport Report(uint32_t worker, int64_t clock, uint32_t batch,
                            double seconds) {
    ClockReport report;
    report.worker = worker;
    report.clock = clock;
    report.batch = batch;
    report.compute_s = seconds;
    return report;
  }

  // Runs the current clock: admits every worker in `per_sample` (seconds
  // per sample) and reports compute = per_sample * batch. Returns the
  // batches it admitted.
  static std::map<uint32_t, uint32_t> RunClock(
      LbBspPolicy* policy, const std::map<uint32_t, double>& per_sample) {
    std::map<uint32_t, uint32_t> batches;
    const int64_t clock = policy->CurrentClock();
    for (const auto& [w, cost] : per_sample) {
      const auto d = policy->Admit(w, clock);
      EXPECT_TRUE(d.has_value()) << "w" << w;
      if (d.has_value()) batches[w] = d->batch;
    }
    for (const auto& [w, batch] : batches) {
      (void)policy->OnClockDone(
          Report(w, clock, batch, per_sample.at(w) * batch));
    }
    EXPECT_EQ(policy->committed_clock(), clock);
    return batches;
  }

  static uint64_t Sum(const std::map<uint32_t, uint32_t>& quotas) {
    uint64_t sum = 0;
    for (const auto& [w, q] : quotas) sum += q;
    return sum;
  }
};

TEST_F(LbBspPolicyTest, InitialQuotasSplitXEquallyByLargestRemainder) {
  LbBspPolicy policy(10, Analytical());
  JoinAll(&policy, 3);
  EXPECT_THAT(policy.quotas(), ElementsAre(Pair(0, 4), Pair(1, 3), Pair(2, 3)));
  EXPECT_EQ(policy.Admit(0, 0)->batch_offset, 0u);
  EXPECT_EQ(policy.Admit(1, 0)->batch_offset, 4u);
  EXPECT_EQ(policy.Admit(2, 0)->batch_offset, 7u);
  EXPECT_EQ(policy.Admit(2, 0)->batch, 3u);
}

TEST_F(LbBspPolicyTest, AnalyticalQuotasFollowTheObservedSpeeds) {
  LbBspPolicy policy(120, Analytical());
  JoinAll(&policy, 3);
  RunClock(&policy, {{0, 0.001}, {1, 0.002}, {2, 0.004}});
  EXPECT_THAT(policy.quotas(),
              ElementsAre(Pair(0, 69), Pair(1, 34), Pair(2, 17)))
      << "speeds 4:2:1 of 120 = 68.6, 34.3, 17.1";
  EXPECT_EQ(Sum(policy.quotas()), 120u);
}

TEST_F(LbBspPolicyTest, QuotasChangeOnlyWhenAClockCommits) {
  LbBspPolicy policy(64, Analytical());
  JoinAll(&policy, 2);
  ASSERT_EQ(policy.Admit(0, 0)->batch, 32u);
  ASSERT_EQ(policy.Admit(1, 0)->batch, 32u);
  EXPECT_THAT(policy.OnClockDone(Report(0, 0, 32, 0.01)), IsEmpty());
  EXPECT_EQ(policy.Admit(1, 0)->batch, 32u) << "clock 0 is under way";
  EXPECT_THAT(policy.OnClockDone(Report(1, 0, 32, 0.03)), SizeIs(1));
  EXPECT_EQ(policy.Admit(0, 1)->batch, 48u) << "3:1 speeds";
  EXPECT_EQ(policy.Admit(1, 1)->batch, 16u);
}

TEST_F(LbBspPolicyTest, EveryPredictorReachesTheProportionalSplit) {
  for (PredictorKind kind :
       {PredictorKind::kLast, PredictorKind::kEma, PredictorKind::kNarx}) {
    SCOPED_TRACE(PredictorKindName(kind));
    LbBspPolicy policy(256, Analytical(kind));
    JoinAll(&policy, 4);
    for (int c = 0; c < 12; ++c) {
      RunClock(&policy, {{0, 0.001}, {1, 0.001}, {2, 0.002}, {3, 0.004}});
    }
    EXPECT_THAT(policy.quotas(), ElementsAre(Pair(0, 93), Pair(1, 93),
                                             Pair(2, 47), Pair(3, 23)));
  }
}

TEST_F(LbBspPolicyTest, JoinerDuringAClockStartsAtTheNextOne) {
  LbBspPolicy policy(90, Analytical());
  JoinAll(&policy, 2);
  ASSERT_TRUE(policy.Admit(0, 0).has_value());
  policy.OnWorkerJoined(2, policy.CurrentClock(), {});
  EXPECT_FALSE(policy.Admit(2, 0).has_value()) << "clock 0 is under way";
  EXPECT_THAT(policy.quotas(), ElementsAre(Pair(0, 45), Pair(1, 45)));
  ASSERT_TRUE(policy.Admit(1, 0).has_value());
  (void)policy.OnClockDone(Report(0, 0, 45, 0.045));
  const auto commits = policy.OnClockDone(Report(1, 0, 45, 0.045));
  ASSERT_THAT(commits, SizeIs(1)) << "clock 0 does not wait for w2";
  EXPECT_THAT(commits[0].workers, ElementsAre(0u, 1u));
  const auto d = policy.Admit(2, 0);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->clock, 1);
  EXPECT_EQ(d->batch, 30u) << "a newcomer weighs the mean speed";
  EXPECT_EQ(Sum(policy.quotas()), 90u);
}

TEST_F(LbBspPolicyTest, JoinerBeforeTheClockStartsIsSplitInAtOnce) {
  LbBspPolicy policy(90, Analytical());
  JoinAll(&policy, 2);
  RunClock(&policy, {{0, 0.001}, {1, 0.001}});
  policy.OnWorkerJoined(2, policy.CurrentClock(), {});
  const auto d = policy.Admit(2, 0);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->clock, 1);
  EXPECT_THAT(policy.quotas(),
              ElementsAre(Pair(0, 30), Pair(1, 30), Pair(2, 30)));
}

TEST_F(LbBspPolicyTest, LeaverMidClockIsResplitAtTheNextClock) {
  LbBspPolicy policy(90, Analytical());
  JoinAll(&policy, 3);
  for (uint32_t w = 0; w < 3; ++w) ASSERT_TRUE(policy.Admit(w, 0).has_value());
  (void)policy.OnClockDone(Report(0, 0, 30, 0.03));
  EXPECT_THAT(policy.OnWorkerLeft(2), IsEmpty());
  EXPECT_EQ(policy.Admit(1, 0)->batch, 30u) << "clock 0 keeps its quotas";
  ASSERT_THAT(policy.OnClockDone(Report(1, 0, 30, 0.03)), SizeIs(1));
  EXPECT_THAT(policy.quotas(), ElementsAre(Pair(0, 45), Pair(1, 45)));
}

TEST_F(LbBspPolicyTest, LeaverBeforeTheClockStartsIsResplitAtOnce) {
  LbBspPolicy policy(90, Analytical());
  JoinAll(&policy, 3);
  EXPECT_THAT(policy.OnWorkerLeft(1), IsEmpty());
  EXPECT_THAT(policy.quotas(), ElementsAre(Pair(0, 45), Pair(2, 45)));
}

TEST_F(LbBspPolicyTest, ClockAbandonedByAllItsWorkersIsSplitAfresh) {
  LbBspPolicy policy(90, Analytical());
  JoinAll(&policy, 3);
  for (uint32_t w = 0; w < 3; ++w) ASSERT_TRUE(policy.Admit(w, 0).has_value());
  for (uint32_t w = 0; w < 3; ++w)
    EXPECT_THAT(policy.OnWorkerLeft(w), IsEmpty());
  policy.OnWorkerJoined(1, policy.CurrentClock(), {});
  const auto d = policy.Admit(1, 0);
  ASSERT_TRUE(d.has_value()) << "nobody else runs clock 0: no deadlock";
  EXPECT_EQ(d->clock, 0);
  EXPECT_EQ(d->batch, 90u);
  policy.OnWorkerJoined(2, policy.CurrentClock(), {});
  EXPECT_FALSE(policy.Admit(2, 0).has_value()) << "w1 runs clock 0 now";
  ASSERT_THAT(policy.OnClockDone(Report(1, 0, 90, 0.09)), SizeIs(1));
  EXPECT_EQ(policy.Admit(2, 0)->clock, 1);
}

TEST_F(LbBspPolicyTest, BoundsFromTheSpecAndCapsAreRespected) {
  LbBspOptions options = Analytical();
  options.min_batch = 8;
  options.max_batch = 100;
  LbBspPolicy policy(200, options);
  WorkerCaps caps;
  caps.max_batch = 60;
  policy.OnWorkerJoined(0, 0, caps);
  policy.OnWorkerJoined(1, 0, {});
  policy.OnWorkerJoined(2, 0, {});
  EXPECT_EQ(policy.bounds(0).max, 60u);
  EXPECT_EQ(policy.bounds(1).max, 100u);
  EXPECT_EQ(policy.bounds(2).min, 8u);
  for (int c = 0; c < 5; ++c) {
    RunClock(&policy, {{0, 0.0001}, {1, 0.001}, {2, 0.1}});
  }
  EXPECT_THAT(policy.quotas(),
              ElementsAre(Pair(0, 60), Pair(1, 100), Pair(2, 40)))
      << "w0 at its cap, w1 at the spec's max, w2 takes the rest";
  EXPECT_TRUE(policy.feasible());
}

TEST_F(LbBspPolicyTest, ImpossibleBoundsAreClampedAndReported) {
  LbBspOptions options = Analytical();
  options.min_batch = 5;
  LbBspPolicy policy(10, options);
  JoinAll(&policy, 3);
  EXPECT_THAT(policy.quotas(), ElementsAre(Pair(0, 5), Pair(1, 5), Pair(2, 5)));
  EXPECT_FALSE(policy.feasible());
  const auto m = policy.Metrics();
  EXPECT_EQ(m.at("lockstep_quota_infeasible"), 1);
  EXPECT_EQ(m.at("lockstep_quota_samples"), 15);
  RunClock(&policy, {{0, 0.001}, {1, 0.001}, {2, 0.001}});  // no crash
}

TEST_F(LbBspPolicyTest, MetricsExportQuotasAndPredictorErrors) {
  LbBspPolicy policy(64, Analytical(PredictorKind::kEma));
  JoinAll(&policy, 2);
  RunClock(&policy, {{0, 0.001}, {1, 0.001}});
  RunClock(&policy, {{0, 0.001}, {1, 0.002}});
  const auto m = policy.Metrics();
  EXPECT_EQ(m.at("lockstep_quota{worker=\"0\"}") +
                m.at("lockstep_quota{worker=\"1\"}"),
            64);
  EXPECT_EQ(m.at("lockstep_global_batch"), 64);
  EXPECT_EQ(m.at("lockstep_quota_infeasible"), 0);
  EXPECT_EQ(m.at("lockstep_predictor_rmse{worker=\"0\"}"), 0);
  EXPECT_EQ(m.at("lockstep_predictor_rmse{worker=\"1\"}"), 500)
      << "predicted 1000 samples/s, saw 500";
  EXPECT_EQ(policy.PredictorRmse(1), 500);
  EXPECT_GT(m.count("lockstep_predicted_speed{worker=\"1\"}"), 0u);
}

TEST_F(LbBspPolicyTest, PredictedSpeedIsTheOneTheClocksQuotaWasSetBy) {
  LbBspPolicy policy(64, Analytical(PredictorKind::kLast));
  JoinAll(&policy, 2);
  EXPECT_FALSE(policy.PredictedSpeed(0, 0).has_value()) << "an equal split";
  RunClock(&policy, {{0, 0.001}, {1, 0.003}});
  // Clock 1's quotas (48, 16) come from speeds 1000 and 333.3; a report of
  // clock 1 sees them until clock 1 commits, whatever it measured.
  ASSERT_EQ(policy.Admit(0, 1)->batch, 48u);
  ASSERT_EQ(policy.Admit(1, 1)->batch, 16u);
  EXPECT_DOUBLE_EQ(policy.PredictedSpeed(0, 1).value_or(0), 1000);
  EXPECT_DOUBLE_EQ(policy.PredictedSpeed(1, 1).value_or(0), 1000.0 / 3);
  EXPECT_FALSE(policy.PredictedSpeed(0, 2).has_value()) << "not yet made";
  EXPECT_FALSE(policy.PredictedSpeed(0, 0).has_value()) << "not for clock 0";
  EXPECT_FALSE(policy.PredictedSpeed(7, 1).has_value()) << "no such worker";
  (void)policy.OnClockDone(Report(0, 1, 48, 0.096));  // now at 500/s
  EXPECT_DOUBLE_EQ(policy.PredictedSpeed(0, 1).value_or(0), 1000);
  (void)policy.OnClockDone(Report(1, 1, 16, 0.048));
  EXPECT_FALSE(policy.PredictedSpeed(0, 1).has_value()) << "committed";
  EXPECT_DOUBLE_EQ(policy.PredictedSpeed(0, 2).value_or(0), 500);
  // The numerical method and BSP predict no speeds.
  LbBspPolicy numerical(64, Numerical());
  JoinAll(&numerical, 2);
  RunClock(&numerical, {{0, 0.001}, {1, 0.003}});
  EXPECT_FALSE(numerical.PredictedSpeed(0, 1).has_value());
  BspPolicy bsp({32});
  EXPECT_FALSE(bsp.PredictedSpeed(0, 0).has_value());
}

TEST_F(LbBspPolicyTest, NumericalMovesFromStragglerToLeaderAfterAWindow) {
  LbBspPolicy policy(128, Numerical());
  JoinAll(&policy, 4);
  const std::map<uint32_t, double> cost = {
      {0, 0.001}, {1, 0.001}, {2, 0.002}, {3, 0.004}};
  RunClock(&policy, cost);
  RunClock(&policy, cost);
  EXPECT_THAT(policy.quotas(),
              ElementsAre(Pair(0, 32), Pair(1, 32), Pair(2, 32), Pair(3, 32)));
  RunClock(&policy, cost);
  EXPECT_THAT(policy.quotas(),
              ElementsAre(Pair(0, 48), Pair(1, 32), Pair(2, 32), Pair(3, 16)));
  const auto m = policy.Metrics();
  EXPECT_EQ(m.at("lockstep_lbbsp_phase"), 0);
  EXPECT_EQ(m.at("lockstep_lbbsp_step"), 16);
  EXPECT_EQ(m.at("lockstep_lbbsp_window"), 3);
  EXPECT_EQ(m.at("lockstep_lbbsp_moves_total"), 1);
}

TEST_F(LbBspPolicyTest, NumericalCountsASlowLinkLikeSlowCompute) {
  // Equal compute, but worker 3's push and pull take 8 ms more per clock
  // (a slower network link): it is the straggler, and loses samples to the
  // leader; its wait for admission is not counted.
  LbBspPolicy policy(128, Numerical());
  JoinAll(&policy, 4);
  for (int c = 0; c < 40; ++c) {
    const int64_t clock = policy.CurrentClock();
    std::map<uint32_t, uint32_t> batches;
    for (uint32_t w = 0; w < 4; ++w) batches[w] = policy.Admit(w, clock)->batch;
    for (const auto& [w, batch] : batches) {
      ClockReport r = Report(w, clock, batch, 0.0002 * batch);
      r.push_s = w == 3 ? 0.004 : 0.0001;
      r.pull_s = w == 3 ? 0.004 : 0.0001;
      r.wait_s = w == 3 ? 0 : 0.05;  // the others wait for it
      (void)policy.OnClockDone(r);
    }
  }
  const std::map<uint32_t, uint32_t> q = policy.quotas();
  EXPECT_LT(q.at(3) + 16, q.at(0)) << "worker 3 keeps " << q.at(3);
  // Balanced: 0.0002 x + 0.0002 = 0.0002 y + 0.008 with 3x + y = 128.
  EXPECT_NEAR(q.at(3), 2.75, 8);
}

TEST_F(LbBspPolicyTest, NumericalBalancesAndNeverBreaksACap) {
  LbBspPolicy policy(256, Numerical());
  WorkerCaps caps;
  caps.max_batch = 70;
  policy.OnWorkerJoined(0, 0, caps);
  for (uint32_t w = 1; w < 4; ++w) policy.OnWorkerJoined(w, 0, {});
  const std::map<uint32_t, double> cost = {
      {0, 0.0005}, {1, 0.001}, {2, 0.002}, {3, 0.004}};
  for (int c = 0; c < 200; ++c) {
    const auto batches = RunClock(&policy, cost);
    ASSERT_LE(batches.at(0), 70u) << "clock " << c;
    ASSERT_EQ(Sum(batches), 256u);
  }
  EXPECT_EQ(policy.Metrics().at("lockstep_lbbsp_phase"), 2) << "balanced";
}

TEST_F(LbBspPolicyTest, NumericalMembershipChangeKeepsTheLearnedShape) {
  LbBspPolicy policy(120, Numerical());
  JoinAll(&policy, 3);
  for (int c = 0; c < 30; ++c) {
    RunClock(&policy, {{0, 0.001}, {1, 0.002}, {2, 0.002}});
  }
  const uint32_t fast = policy.quotas().at(0);
  EXPECT_GT(fast, policy.quotas().at(1));
  EXPECT_THAT(policy.OnWorkerLeft(2), IsEmpty());
  EXPECT_EQ(Sum(policy.quotas()), 120u);
  EXPECT_GT(policy.quotas().at(0), policy.quotas().at(1))
      << "w2's share is spread in proportion";
  EXPECT_EQ(policy.Metrics().at("lockstep_lbbsp_step"), 30) << "X/(2n)";
}

TEST_F(LbBspPolicyTest, NameApplyModeAndCurrentClock) {
  EXPECT_EQ(LbBspPolicy(64, {}).name(), "lbbsp:analytical:narx");
  EXPECT_EQ(LbBspPolicy(64, Analytical(PredictorKind::kEma)).name(),
            "lbbsp:analytical:ema");
  LbBspOptions options = Numerical();
  options.min_batch = 2;
  options.max_batch = 50;
  LbBspPolicy policy(64, options);
  EXPECT_EQ(policy.name(), "lbbsp:numerical:min=2:max=50");
  EXPECT_EQ(policy.apply_mode(), ApplyMode::kOnCommit);
  EXPECT_EQ(policy.CurrentClock(), 0);
  EXPECT_EQ(policy.global_batch(), 64u);
}

}  // namespace
}  // namespace lockstep
