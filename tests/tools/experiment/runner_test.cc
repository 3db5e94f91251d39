// The experiment runner against a fake launcher: a shell script that
// records each launch and, by seed, succeeds (writing a summary.json),
// fails or reports a timeout, so the tests can check what is run, what is
// recorded and what a second invocation runs again.
#include "tools/experiment/runner.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"
#include "tools/experiment/report.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// Seed 1 succeeds, seed 2 fails, seed 3 reports the launcher's timeout.
constexpr char kFakeLauncher[] = R"(#!/bin/sh
prev=""
for a in "$@"; do
  [ "$prev" = --run-dir ] && dir=$a
  [ "$prev" = --seed ] && seed=$a
  [ "$prev" = --sync ] && sync=$a
  prev=$a
done
echo "$sync $seed" >> "$FAKE_LAUNCHES"
mkdir -p "$dir"
case "$seed" in
  2) echo "worker 1 exploded" >&2; exit 1 ;;
  3) exit 124 ;;
esac
ttt=2.0
[ "$sync" = bsp ] && ttt=3.0
echo "{\"policy\":\"$sync\",\"clocks\":20,\"wall_s\":4.5,\"test_accuracy\":0.9,\"samples_per_s\":100,\"time_to_target_s\":$ttt}" > "$dir/summary.json"
)";

std::string ReadRunnerFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ExperimentRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.empty());
    std::ofstream(launcher_) << kFakeLauncher;
    chmod(launcher_.c_str(), 0755);
    setenv("FAKE_LAUNCHES", (tmp_ + "/launches").c_str(), 1);
  }

  std::string Spec(const std::string& seeds, double lr = 0.1) {
    return "name = \"fake\"\nseeds = " + seeds +
           "\npolicies = [\"bsp\", \"asp\"]\n[job]\nmodel = \"mlp:8\"\n"
           "data = \"synthetic:samples=256:dim=8\"\nworkers = 2\nclocks = "
           "20\nlr = " +
           std::to_string(lr) + "\n";
  }
  std::vector<RunState> States(const std::string& text) {
    auto spec = ParseExperimentSpec(text, "spec.toml");
    EXPECT_TRUE(spec.ok()) << spec.status().message();
    auto runs = PlanExperiment(*spec, tmp_ + "/out", launcher_);
    EXPECT_TRUE(runs.ok()) << runs.status().message();
    auto states = InspectRuns(*runs);
    EXPECT_TRUE(states.ok()) << states.status().message();
    return *states;
  }
  // Runs the spec `text`; returns the outcome.
  ExperimentOutcome Run(const std::string& text, bool retry_failed = false,
                        bool dry_run = false) {
    auto spec = ParseExperimentSpec(text, "spec.toml");
    EXPECT_TRUE(spec.ok()) << spec.status().message();
    auto runs = PlanExperiment(*spec, tmp_ + "/out", launcher_);
    EXPECT_TRUE(runs.ok()) << runs.status().message();
    RunnerOptions options;
    options.out_dir = tmp_ + "/out";
    options.retry_failed = retry_failed;
    options.dry_run = dry_run;
    log_.str("");
    auto outcome = RunExperimentPlan(*spec, *runs, options, log_);
    EXPECT_TRUE(outcome.ok()) << outcome.status().message();
    return outcome.ok() ? *outcome : ExperimentOutcome();
  }
  std::string Launches() { return ReadRunnerFile(tmp_ + "/launches"); }

  TempDir dir_{"lockstep-runner"};
  const std::string tmp_ = dir_.path();
  const std::string launcher_ = tmp_ + "/fake-launch";
  std::ostringstream log_;
};

TEST_F(ExperimentRunnerTest, RecordsEveryRunAndGoesOnAfterFailures) {
  const ExperimentOutcome outcome = Run(Spec("[1, 2, 3]"));
  EXPECT_EQ(outcome.planned, 6);
  EXPECT_EQ(outcome.ran, 6);
  EXPECT_EQ(outcome.ok, 2);
  EXPECT_EQ(outcome.failed, 4);
  EXPECT_EQ(Launches(), "bsp 1\nbsp 2\nbsp 3\nasp 1\nasp 2\nasp 3\n");
  const std::vector<RunState> states = States(Spec("[1, 2, 3]"));
  ASSERT_EQ(states.size(), 6u);
  ASSERT_TRUE(states[0].record && states[1].record && states[2].record);
  EXPECT_EQ(states[0].record->status, "ok");
  EXPECT_EQ(states[1].record->status, "failed");
  EXPECT_NE(states[1].record->exit.find("exited with status 1: worker 1 "
                                        "exploded"),
            std::string::npos)
      << states[1].record->exit;
  EXPECT_EQ(states[2].record->status, "timeout");
  EXPECT_EQ(states[0].record->command, states[0].run.argv);
  EXPECT_NE(
      ReadRunnerFile(states[1].run.dir + "/launcher.log").find("exploded"),
      std::string::npos);
  EXPECT_EQ(ReadRunnerFile(tmp_ + "/out/spec.toml"), Spec("[1, 2, 3]"));
  EXPECT_NE(log_.str().find("[2/6] uniform / bsp / seed 2 ... failed"),
            std::string::npos)
      << log_.str();
}

TEST_F(ExperimentRunnerTest, ARerunRunsOnlyWhatIsMissing) {
  Run(Spec("[1, 2]"));
  ASSERT_EQ(Launches(), "bsp 1\nbsp 2\nasp 1\nasp 2\n");
  // A seed added to the spec: only its runs are new.
  ExperimentOutcome outcome = Run(Spec("[1, 2, 4]"));
  EXPECT_EQ(outcome.already_done, 4);
  EXPECT_EQ(outcome.ran, 2);
  EXPECT_EQ(Launches(), "bsp 1\nbsp 2\nasp 1\nasp 2\nbsp 4\nasp 4\n");
  // Failures are kept unless asked to retry them.
  outcome = Run(Spec("[1, 2, 4]"), /*retry_failed=*/true);
  EXPECT_EQ(outcome.ran, 2);
  EXPECT_EQ(Launches(),
            "bsp 1\nbsp 2\nasp 1\nasp 2\nbsp 4\nasp 4\nbsp 2\nasp 2\n");
}

TEST_F(ExperimentRunnerTest, AnInterruptedRunsFolderIsClearedAndRunAgain) {
  Run(Spec("[1]"));
  const std::vector<RunState> before = States(Spec("[1]"));
  const std::string dir = before[1].run.dir;
  fs::remove(dir + "/" + kRunRecordFile);
  std::ofstream(dir + "/leftover") << "from the killed run";
  const std::vector<RunState> partial = States(Spec("[1]"));
  EXPECT_TRUE(partial[1].partial);
  EXPECT_FALSE(partial[0].partial);
  const ExperimentOutcome outcome = Run(Spec("[1]"));
  EXPECT_EQ(outcome.ran, 1);
  EXPECT_FALSE(fs::exists(dir + "/leftover"));
  EXPECT_TRUE(fs::exists(dir + "/" + kRunRecordFile));
  EXPECT_EQ(Launches(), "bsp 1\nasp 1\nasp 1\n");
}

TEST_F(ExperimentRunnerTest, AFolderOfAnotherSpecIsNeverMixedIn) {
  Run(Spec("[1]"));
  auto spec = ParseExperimentSpec(Spec("[1]", 0.3), "spec.toml");
  ASSERT_TRUE(spec.ok());
  auto runs = PlanExperiment(*spec, tmp_ + "/out", launcher_);
  ASSERT_TRUE(runs.ok());
  auto states = InspectRuns(*runs);
  ASSERT_FALSE(states.ok());
  EXPECT_NE(states.status().message().find("holds a run of another spec"),
            std::string::npos)
      << states.status().message();
}

TEST_F(ExperimentRunnerTest, RunsRecordedBeforeAJobFlagExistedStillCount) {
  Run(Spec("[1]"));
  // Recorded by a build without --budget-s: its default changes nothing.
  const std::vector<RunState> before = States(Spec("[1]"));
  for (const RunState& s : before) {
    RunRecord r = *s.record;
    auto at = std::find(r.command.begin(), r.command.end(), "--budget-s");
    ASSERT_NE(at, r.command.end());
    ASSERT_EQ(*(at + 1), "0");
    r.command.erase(at, at + 2);
    ASSERT_TRUE(WriteRunRecord(s.run.dir, r).ok());
  }
  auto spec = ParseExperimentSpec(Spec("[1]"), "spec.toml");
  ASSERT_TRUE(spec.ok());
  auto runs = PlanExperiment(*spec, tmp_ + "/out", launcher_);
  ASSERT_TRUE(runs.ok());
  auto states = InspectRuns(*runs);
  ASSERT_TRUE(states.ok()) << states.status().message();
  EXPECT_TRUE((*states)[0].record.has_value());
  // A budget that is not the default is another run.
  std::string budget = Spec("[1]");
  budget.insert(budget.find("[job]") + 6, "budget_s = 5\n");
  spec = ParseExperimentSpec(budget, "spec.toml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  runs = PlanExperiment(*spec, tmp_ + "/out", launcher_);
  ASSERT_TRUE(runs.ok());
  EXPECT_FALSE(InspectRuns(*runs).ok());
}

TEST_F(ExperimentRunnerTest, AMovedExperimentFolderHoldsTheSameRuns) {
  Run(Spec("[1]"));
  fs::rename(tmp_ + "/out", tmp_ + "/moved");
  auto spec = ParseExperimentSpec(Spec("[1]"), "spec.toml");
  ASSERT_TRUE(spec.ok());
  auto runs = PlanExperiment(*spec, tmp_ + "/moved", launcher_);
  ASSERT_TRUE(runs.ok());
  auto states = InspectRuns(*runs);
  ASSERT_TRUE(states.ok()) << states.status().message();
  ASSERT_EQ(states->size(), 2u);
  EXPECT_TRUE((*states)[0].record.has_value());
}

TEST_F(ExperimentRunnerTest, ADryRunLaunchesNothingAndEstimates) {
  Run(Spec("[1, 2]"), false, /*dry_run=*/true);
  EXPECT_FALSE(fs::exists(tmp_ + "/launches"));
  EXPECT_FALSE(fs::exists(tmp_ + "/out"));
  EXPECT_NE(log_.str().find("uniform / asp / seed 2: to run"),
            std::string::npos)
      << log_.str();
  EXPECT_NE(log_.str().find("estimate: 4 of 4 runs left"), std::string::npos)
      << log_.str();
  Run(Spec("[1]"));
  Run(Spec("[1, 2]"), false, /*dry_run=*/true);
  EXPECT_NE(log_.str().find("uniform / bsp / seed 1: done (ok)"),
            std::string::npos)
      << log_.str();
  // Seed 2's runs take the measured time of seed 1's: a few ms each.
  EXPECT_NE(log_.str().find("estimate: 2 of 4 runs left, about 0 s (2 from "
                            "the same runs' measured times"),
            std::string::npos)
      << log_.str();
}

TEST_F(ExperimentRunnerTest, TheResultsTablePairsSpeedupsBySeed) {
  Run(Spec("[1, 2]"));
  auto spec = ParseExperimentSpec(Spec("[1, 2]"), "spec.toml");
  ASSERT_TRUE(spec.ok());
  const std::string md = ReportMarkdown(*spec, States(Spec("[1, 2]")));
  // bsp reached its target at 3 s, asp at 2 s; seed 2 failed for both.
  EXPECT_NE(md.find("| bsp | 3.0 | 1.00x | 1/1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| asp | 2.0 | 1.50x | 1/1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 (1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("global order"), std::string::npos) << md;
}

}  // namespace
}  // namespace lockstep
