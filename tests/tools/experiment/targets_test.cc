#include "tools/experiment/targets.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

// A finished run whose evaluations at clocks 10, 20, ... (after 1, 2, ...
// s of training) have `accuracies` and test loss 1 - accuracy; X = 64.
RunOutcome TargetRun(const std::string& policy, uint64_t seed,
                     const std::vector<double>& accuracies) {
  RunOutcome r;
  r.policy = policy;
  r.seed = seed;
  RunMetrics m;
  for (size_t i = 0; i < accuracies.size(); ++i) {
    m.evals.push_back({10.0 * (i + 1), 1.0 * (i + 1), 1 - accuracies[i],
                       accuracies[i], i + 1 == accuracies.size()});
  }
  m.summary.fields = {{"global_batch", 64},
                      {"test_accuracy", accuracies.back()},
                      {"test_loss", 1 - accuracies.back()},
                      {"clocks", 10.0 * accuracies.size()},
                      {"samples", 640.0 * accuracies.size()}};
  r.metrics = m;
  return r;
}

// bsp reaches 0.8 at 2 s, 3 s and never; lb at 1 s, 1 s and 2 s; a failed
// lb run counts in neither.
std::vector<RunOutcome> TargetRuns() {
  RunOutcome failed;
  failed.policy = "lb";
  failed.seed = 4;
  return {TargetRun("bsp", 1, {0.5, 0.8, 0.9}),
          TargetRun("bsp", 2, {0.5, 0.7, 0.8}),
          TargetRun("bsp", 3, {0.5, 0.6, 0.7}),
          TargetRun("lb", 1, {0.8, 0.85, 0.9}),
          TargetRun("lb", 2, {0.82, 0.9, 0.9}),
          TargetRun("lb", 3, {0.7, 0.8, 0.8}),
          failed};
}

TEST(TargetsTest, TheMainTargetJoinsTheSpecsInOrderThenTheLoss) {
  const std::vector<RunTarget> t = ReportTargets(0.85, {0.8, 0.83, 0.85}, 0.45);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0], (RunTarget{0.8, false}));
  EXPECT_EQ(t[2], (RunTarget{0.85, false}));
  EXPECT_EQ(t[3], (RunTarget{0.45, true}));
  EXPECT_EQ(t[3].Text(), "loss 0.45");
  EXPECT_EQ(ReportTargets(0.9, {}, 0).size(), 1u);
  EXPECT_TRUE(ReportTargets(0, {}, 0).empty());
}

TEST(TargetsTest, EachTargetsTimeClocksSamplesAndSpeedupFromTheEvaluations) {
  const std::vector<TargetRow> rows =
      TargetRows(TargetRuns(), {"bsp", "lb"}, "bsp",
                 {{0.8, false}, {0.9, false}, {0.25, true}});
  ASSERT_EQ(rows.size(), 6u);
  const TargetRow& bsp = rows[0];
  EXPECT_EQ(bsp.policy, "bsp");
  EXPECT_EQ(bsp.runs, 3);
  EXPECT_EQ(bsp.reached, 2);
  EXPECT_EQ(bsp.time_s.median, 3);
  EXPECT_TRUE(std::isinf(bsp.time_s.hi));
  EXPECT_EQ(bsp.clocks.median, 30);
  EXPECT_EQ(bsp.samples.median, 30 * 64);
  EXPECT_EQ(bsp.speedup.median, 1);
  const TargetRow& lb = rows[3];
  EXPECT_EQ(lb.runs, 3);
  EXPECT_EQ(lb.reached, 3);
  EXPECT_EQ(lb.time_s.median, 1);
  EXPECT_EQ(lb.samples.median, 640);
  EXPECT_EQ(lb.speedup.median, 3);  // 3 s over 1 s
  // 0.9: bsp once (3 s), lb twice (3 s, 2 s).
  EXPECT_EQ(rows[1].reached, 1);
  EXPECT_TRUE(std::isinf(rows[1].time_s.median));
  EXPECT_EQ(rows[4].reached, 2);
  EXPECT_EQ(rows[4].time_s.median, 3);
  EXPECT_EQ(rows[4].speedup.median, INFINITY);
  // Loss <= 0.25 is accuracy >= 0.75: bsp at 2 s, 3 s, never.
  EXPECT_EQ(rows[2].target, (RunTarget{0.25, true}));
  EXPECT_EQ(rows[2].reached, 2);
  EXPECT_EQ(rows[2].time_s.median, 3);
}

TEST(TargetsTest, TheTableAndCsvCarryEveryRow) {
  const std::vector<TargetRow> rows =
      TargetRows(TargetRuns(), {"bsp", "lb"}, "bsp", {{0.8, false}});
  const std::string md = TargetsMarkdown(rows, "bsp");
  EXPECT_NE(md.find("| policy | target | reached | time (s) | clocks | "
                    "samples | speedup vs bsp |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| lb | accuracy 0.8 | 3/3 | 1.0 [1.0, 2.0] | 10 [10, "
                    "20] | 640 [640, 1280] |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("bootstrap percentile interval of the median"),
            std::string::npos);
  const std::string csv = TargetsCsv(rows);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "policy,target_kind,target,runs,reached,time_s_median,time_s_lo,"
            "time_s_hi,clocks_median,clocks_lo,clocks_hi,samples_median,"
            "samples_lo,samples_hi,speedup,speedup_lo,speedup_hi");
  EXPECT_NE(csv.find("\nbsp,accuracy,0.8,3,2,3,2,inf,30,20,inf,1920,1280,inf,"
                     "1,1,1\n"),
            std::string::npos)
      << csv;
}

TEST(TargetsTest, TheBudgetTableShowsWhatEachPolicyReachedInTheTime) {
  const std::string md = BudgetMarkdown(TargetRuns(), {"bsp", "lb"}, 30);
  EXPECT_NE(md.find("At the time budget (30 s of training"), std::string::npos)
      << md;
  // bsp ends at 0.9, 0.8 and 0.7; lb at 0.9, 0.9 and 0.8.
  EXPECT_NE(md.find("| bsp | 0.8000 [0.7000, 0.9000] | 0.2000 [0.1000, "
                    "0.3000] | 30 | 1920 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| lb | 0.9000 [0.8000, 0.9000] |"), std::string::npos)
      << md;
}

}  // namespace
}  // namespace lockstep
