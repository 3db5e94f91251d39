#include "tools/experiment/sweep_report.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

// A finished run of `policy` at sweep point lr=`lr` whose evaluations at
// clocks 10, 20, ... (1 s of training each) reach `accuracies`; its main
// target is 0.8.
RunOutcome SweptRun(const std::string& policy, const std::string& lr,
                    uint64_t seed, const std::vector<double>& accuracies) {
  RunOutcome r;
  r.policy = policy;
  r.sweep_point = lr.empty() ? "" : "lr=" + lr;
  if (!lr.empty()) r.sweep_settings = {{"lr", lr, 3}};
  r.seed = seed;
  r.main_target = 0.8;
  RunMetrics m;
  for (size_t i = 0; i < accuracies.size(); ++i) {
    m.evals.push_back({10.0 * (i + 1), 1.0 * (i + 1), 1 - accuracies[i],
                       accuracies[i], i + 1 == accuracies.size()});
  }
  m.summary.fields["test_accuracy"] = accuracies.back();
  r.metrics = m;
  return r;
}

RunOutcome FailedRun(const std::string& policy, const std::string& lr,
                     uint64_t seed) {
  RunOutcome r;
  r.policy = policy;
  r.sweep_point = "lr=" + lr;
  r.sweep_settings = {{"lr", lr, 3}};
  r.seed = seed;
  return r;
}

const SweepGroup& Group(const std::vector<SweepGroup>& groups,
                        const std::string& name) {
  for (const SweepGroup& g : groups) {
    if (g.Name() == name) return g;
  }
  ADD_FAILURE() << "no group " << name;
  return groups.front();
}

TEST(SweepReportTest, ChoosesTheLowestMedianTimeToTarget) {
  // lr 0.05 reaches 0.8 at 2, 3 and 2 s; lr 0.1 at 1 s, 1 s and never.
  const std::vector<RunOutcome> runs = {
      SweptRun("ssp0", "0.05", 1, {0.5, 0.8, 0.85}),
      SweptRun("ssp0", "0.05", 2, {0.5, 0.7, 0.8}),
      SweptRun("ssp0", "0.05", 3, {0.5, 0.8, 0.9}),
      SweptRun("ssp0", "0.1", 1, {0.8, 0.8, 0.8}),
      SweptRun("ssp0", "0.1", 2, {0.81, 0.8, 0.8}),
      SweptRun("ssp0", "0.1", 3, {0.3, 0.3, 0.3}),
      SweptRun("bsp", "", 1, {0.9}),
  };
  const auto groups = ScoreSweep(runs, {"bsp", "ssp0"}, "time-to-target");
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].Name(), "bsp");
  EXPECT_TRUE(groups[0].chosen);
  const SweepGroup& slow = Group(groups, "ssp0@lr=0.05");
  const SweepGroup& fast = Group(groups, "ssp0@lr=0.1");
  EXPECT_EQ(slow.median_time_s, 2);
  EXPECT_EQ(fast.median_time_s, 1);
  EXPECT_TRUE(std::isinf(fast.seeds[2].time_s));
  EXPECT_TRUE(fast.chosen);
  EXPECT_FALSE(slow.chosen);
  EXPECT_NEAR(slow.mean_accuracy, (2.15 + 2.0 + 2.2) / 9, 1e-12);
  EXPECT_EQ(slow.median_final_accuracy, 0.85);
  // By mean accuracy (0.706 against 0.634) and by final accuracy (0.85
  // against 0.8) the other one wins.
  const auto by_accuracy = ScoreSweep(runs, {"bsp", "ssp0"}, "mean-accuracy");
  EXPECT_TRUE(Group(by_accuracy, "ssp0@lr=0.05").chosen);
  EXPECT_FALSE(Group(by_accuracy, "ssp0@lr=0.1").chosen);
  const auto by_final = ScoreSweep(runs, {"bsp", "ssp0"}, "final-accuracy");
  EXPECT_TRUE(Group(by_final, "ssp0@lr=0.05").chosen);
}

TEST(SweepReportTest, TiesAndNeverReachedGoToTheHigherMeanAccuracy) {
  // Neither reaches 0.8: the higher mean accuracy wins.
  const auto never = ScoreSweep({SweptRun("asp", "0.02", 1, {0.5, 0.7}),
                                 SweptRun("asp", "0.05", 1, {0.6, 0.75})},
                                {"asp"}, "time-to-target");
  EXPECT_FALSE(Group(never, "asp@lr=0.02").chosen);
  EXPECT_TRUE(Group(never, "asp@lr=0.05").chosen);
  // Both at 2 s: the higher mean accuracy wins.
  const auto tie = ScoreSweep({SweptRun("asp", "0.02", 1, {0.7, 0.9}),
                               SweptRun("asp", "0.05", 1, {0.6, 0.8})},
                              {"asp"}, "time-to-target");
  EXPECT_TRUE(Group(tie, "asp@lr=0.02").chosen);
  // Equal in everything: the first in the spec's order.
  const auto equal = ScoreSweep(
      {SweptRun("asp", "0.02", 1, {0.7}), SweptRun("asp", "0.05", 1, {0.7})},
      {"asp"}, "time-to-target");
  EXPECT_TRUE(Group(equal, "asp@lr=0.02").chosen);
  EXPECT_FALSE(Group(equal, "asp@lr=0.05").chosen);
}

TEST(SweepReportTest, AGroupWithoutAFinishedRunIsNeverChosen) {
  const auto groups =
      ScoreSweep({FailedRun("asp", "0.02", 1), FailedRun("asp", "0.02", 2),
                  SweptRun("asp", "0.05", 1, {0.1})},
                 {"asp"}, "time-to-target");
  const SweepGroup& failed = Group(groups, "asp@lr=0.02");
  EXPECT_EQ(failed.ok, 0);
  EXPECT_EQ(failed.seeds.size(), 2u);
  EXPECT_TRUE(std::isnan(failed.median_time_s));
  EXPECT_FALSE(failed.chosen);
  EXPECT_TRUE(Group(groups, "asp@lr=0.05").chosen);
}

TEST(SweepReportTest, TheCsvHasEverySeedItsSettingsAndTheGroupsValues) {
  const auto groups = ScoreSweep(
      {SweptRun("ssp0", "0.05", 1, {0.5, 0.8}), FailedRun("ssp0", "0.05", 2),
       SweptRun("ssp0", "0.1", 1, {0.8, 0.9}), SweptRun("bsp", "", 1, {0.9})},
      {"bsp", "ssp0"}, "time-to-target");
  const std::string csv = SweepCsv({{"one-slow", groups}}, "time-to-target");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "scenario,policy,run_group,lr,seed,status,time_to_target_s,"
            "mean_test_accuracy,final_test_accuracy,"
            "group_median_time_to_target_s,group_mean_test_accuracy,"
            "group_median_final_test_accuracy,criterion,chosen");
  EXPECT_NE(csv.find("\none-slow,bsp,bsp,,1,ok,1,0.9,0.9,1,0.9,0.9,"
                     "time-to-target,1\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\none-slow,ssp0,ssp0@lr=0.05,0.05,1,ok,2,0.65,0.8,2,"
                     "0.65,0.8,time-to-target,0\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\none-slow,ssp0,ssp0@lr=0.05,0.05,2,failed,,,,2,0.65,"
                     "0.8,time-to-target,0\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\none-slow,ssp0,ssp0@lr=0.1,0.1,1,ok,1,0.85,0.9,1,0.85,"
                     "0.9,time-to-target,1\n"),
            std::string::npos)
      << csv;
}

TEST(SweepReportTest, TheMarkdownMarksEachPolicysBestAndStatesTheCriterion) {
  const auto groups = ScoreSweep({SweptRun("ssp0", "0.05", 1, {0.5, 0.8}),
                                  SweptRun("ssp0", "0.1", 1, {0.8, 0.9})},
                                 {"ssp0"}, "time-to-target");
  const std::string md = SweepMarkdown(groups, "time-to-target");
  EXPECT_NE(md.find("| ssp0@lr=0.1 | 1 (0) | 1/1 | 1.0 | 0.8500 | 0.9000 | "
                    "**best** |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ssp0@lr=0.05 | 1 (0) | 1/1 | 2.0 | 0.6500 | 0.8000 |  "
                    "|"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("the lowest median time to the main target (0.800)"),
            std::string::npos)
      << md;
  EXPECT_EQ(SweepMarkdown(ScoreSweep({SweptRun("bsp", "", 1, {0.9})}, {"bsp"},
                                     "time-to-target"),
                          "time-to-target"),
            "");
}

}  // namespace
}  // namespace lockstep
