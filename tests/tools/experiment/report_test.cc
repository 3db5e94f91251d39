// The report from fixture run folders: files written here with known
// numbers (what the coordinator and the runner would write), so every
// table cell can be checked against them, and the plotting script's HTML
// and PNGs against the plots report.json asks for.
#include "tools/experiment/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"
#include "tools/experiment/plan.h"
#include "tools/experiment/run_metrics.h"
#include "tools/experiment/table.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

constexpr char kFixtureSpec[] = R"(name = "fixture"
seeds = [1, 2]
policies = ["bsp", { sync = "lbbsp:numerical", label = "lb" }]

[job]
model = "mlp:8"
data = "synthetic:samples=256:dim=8"
workers = 2
clocks = 4
target_accuracy = 0.8

[paper]
claim = "LB-BSP up to 54% faster than BSP"
policy = "lb"
speedup = 1.54
)";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ExperimentReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty());
    std::ofstream(dir_ + "/spec.toml") << kFixtureSpec;
    auto spec = ParseExperimentSpec(kFixtureSpec, "spec.toml");
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    auto runs = PlanExperiment(*spec, dir_, "lockstep-launch");
    ASSERT_TRUE(runs.ok()) << runs.status().message();
    for (const PlannedRun& run : *runs) WriteRun(run);
  }
  // bsp: target at 10 s (seed 1) and 12 s (seed 2), clock 3; lb: at 5 s
  // and 8 s, clock 2. Worker 1 waits 3 of its 4 ms per clock under bsp,
  // 1 of 4 under lb; staleness 0,0,0,0,0,0,1,2 per run.
  void WriteRun(const PlannedRun& run) {
    fs::create_directories(run.dir);
    const bool bsp = run.policy == "bsp";
    const double ttt =
        bsp ? (run.seed == 1 ? 10 : 12) : (run.seed == 1 ? 5 : 8);
    std::ofstream(run.dir + "/summary.json")
        << "{\"policy\":\"" << run.job.sync
        << "\",\"clocks\":4,\"wall_s\":20,\"samples_per_s\":"
        << (bsp ? 100 : 150)
        << ",\"test_accuracy\":0.85,\"time_to_target_s\":" << ttt
        << ",\"dropped_pushes\":0,\"policy_overhead_share\":0.001"
        << ",\"compute_share\":0.5,\"push_share\":0.1,\"pull_share\":0.1,"
           "\"wait_share\":0.3,\"policy_metrics\":{"
        << (bsp ? ""
                : "\"lockstep_predicted_speed{worker=\\\"0\\\"}\":1000,"
                  "\"lockstep_predictor_rmse{worker=\\\"0\\\"}\":100,"
                  "\"lockstep_predicted_speed{worker=\\\"1\\\"}\":500,"
                  "\"lockstep_predictor_rmse{worker=\\\"1\\\"}\":150")
        << "}}\n";
    std::ofstream(run.dir + "/config.json")
        << "{\"job\":{\"target_accuracy\":0.8},\"lockstep_version\":\"0.1.0\","
           "\"protocol_version\":2,\"machine\":{\"hostname\":\"fixture\","
           "\"nproc\":2,\"mem_total_kb\":2097152,\"kernel\":\"Linux\","
           "\"compiler\":\"12\"},\"start_time_utc\":\"2026-01-01T00:00:00Z\"}"
           "\n";
    std::ofstream metrics(run.dir + "/metrics.jsonl");
    const int target_clock = bsp ? 3 : 2;
    for (int c = 0; c < 4; ++c) {
      for (int w = 0; w < 2; ++w) {
        const double wait = w == 1 ? (bsp ? 0.003 : 0.001) : 0.0;
        const int staleness = c == 3 ? (w == 0 ? 1 : 2) : 0;
        metrics << "{\"worker\":" << w << ",\"clock\":" << c
                << ",\"batch\":" << (bsp ? 32 : 40 - 16 * w)
                << ",\"compute_s\":" << 0.004 - wait
                << ",\"push_s\":0,\"pull_s\":0,\"wait_s\":" << wait
                << ",\"staleness\":" << staleness << ",\"dropped\":false}\n";
      }
    }
    std::ofstream eval(run.dir + "/eval.jsonl");
    for (int c = 1; c <= 4; ++c) {
      eval << "{\"clock\":" << c << ",\"wall_s\":" << c * ttt / target_clock
           << ",\"test_accuracy\":" << (c >= target_clock ? 0.85 : 0.5)
           << "}\n";
    }
    RunRecord record;
    record.status = "ok";
    record.exit = "exited with status 0";
    record.command = run.argv;
    ASSERT_TRUE(WriteRunRecord(run.dir, record).ok());
  }

  TempDir tmp_{"lockstep-report"};
  const std::string dir_ = tmp_.path();
};

TEST_F(ExperimentReportTest, ReadsEveryMetricOfARunFolder) {
  auto m = ReadRunMetrics(dir_ + "/uniform/lb/seed-2");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->target_accuracy, 0.8);
  ASSERT_TRUE(m->clocks_to_target);
  EXPECT_EQ(*m->clocks_to_target, 2);
  EXPECT_DOUBLE_EQ(m->mean_clock_s, 5);
  ASSERT_EQ(m->idle_share.size(), 2u);
  EXPECT_DOUBLE_EQ(m->idle_share[0], 0);
  EXPECT_NEAR(m->idle_share[1], 0.25, 1e-12);
  EXPECT_EQ(m->staleness_p50, 0);
  EXPECT_EQ(m->staleness_p99, 2);
  EXPECT_EQ(m->pushes, 8);
  // Worker 0 computes 40 samples in 4 ms, worker 1 24 in 3 ms.
  ASSERT_EQ(m->mean_speed.size(), 2u);
  EXPECT_NEAR(m->mean_speed[0], 10000, 1e-6);
  EXPECT_NEAR(m->mean_speed[1], 8000, 1e-6);
  ASSERT_TRUE(m->predictor_rmse_share);
  EXPECT_NEAR(*m->predictor_rmse_share, (100.0 / 10000 + 150.0 / 8000) / 2,
              1e-12);
  auto bsp = ReadRunMetrics(dir_ + "/uniform/bsp/seed-1");
  ASSERT_TRUE(bsp.ok());
  EXPECT_FALSE(bsp->predictor_rmse_share);
}

TEST_F(ExperimentReportTest, TablesHoldTheFixturesMediansAndSpreads) {
  auto spec = ParseExperimentSpec(kFixtureSpec, "spec.toml");
  auto runs = PlanExperiment(*spec, dir_, "lockstep-launch");
  auto states = InspectRuns(*runs);
  ASSERT_TRUE(states.ok());
  const std::string md = ReportMarkdown(*spec, *states);
  // Medians of two seeds with their bootstrap intervals: a resample of
  // two seeds gives one seed twice (each 1/4 of the time) or both, so the
  // 2.5% and 97.5% points are the two seeds' values. The speedup is the
  // ratio of the medians, 11 / 6.5; resampled, 10/5 = 2 or 12/8 = 1.5.
  EXPECT_NE(md.find("| bsp | 11.0 [10.0, 12.0] | 1.00x | 2/2 | 3 | 5000.0 | "
                    "100 | 0.8500 | 20.0 | 2 (0) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| lb | 6.5 [5.0, 8.0] | 1.69x [1.50x, 2.00x] | 2/2 | 2 |"),
            std::string::npos)
      << md;
  // The fixture's runs hold no predicted times: no balance columns.
  EXPECT_NE(md.find("| bsp | 50 / 10 / 10 / 30 | 0 / 75 | 0 | 0 / 2 | 0.10 | "
                    "- | - |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| lb | 50 / 10 / 10 / 30 | 0 / 25 | 0 | 0 / 2 | 0.10 | "
                    "- | - |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**Published: lb over bsp 1.54x. Here: 1.69x [1.50x, "
                    "2.00x] over 2 seed(s)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Machine: fixture, 2 CPUs, 2.0 GiB"), std::string::npos)
      << md;
  EXPECT_NE(md.find("```toml\nname = \"fixture\""), std::string::npos);
}

TEST_F(ExperimentReportTest, WritesAnHtmlPageWithEveryPlotEmbedded) {
  ReportCommand command;
  command.dir = dir_;
  command.script =
      (fs::read_symlink("/proc/self/exe").parent_path() / "lockstep-report.py")
          .string();
  std::ostringstream out, err;
  ASSERT_EQ(RunReportCommand(command, out, err), 0) << err.str();
  const std::string html = Slurp(dir_ + "/report.html");
  size_t images = 0;
  for (size_t at = html.find("data:image/png;base64,"); at != std::string::npos;
       at = html.find("data:image/png;base64,", at + 1)) {
    ++images;
  }
  EXPECT_EQ(images, 5u);
  EXPECT_NE(html.find("data:text/csv;base64,"), std::string::npos);
  EXPECT_NE(html.find("<td>lb</td>"), std::string::npos);
  for (const char* kind :
       {"accuracy-time", "accuracy-clock", "batches", "clock-times", "idle"}) {
    const std::string png =
        Slurp(dir_ + "/report/uniform-" + std::string(kind) + ".png");
    ASSERT_GT(png.size(), 1000u) << kind;
    EXPECT_EQ(png.substr(1, 3), "PNG") << kind;
  }
  const std::string csv = Slurp(dir_ + "/report/uniform.csv");
  EXPECT_EQ(csv.rfind("policy,runs,failed,reached,time_to_target_s_median,", 0),
            0u);
  EXPECT_NE(csv.find("\nlb,2,0,2,6.5,5,8,1.75,1.5,2,"), std::string::npos)
      << csv;
  EXPECT_NE(Slurp(dir_ + "/report.md").find("![Test accuracy vs training time"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// Two workers; worker 0 turns 3x slower at clock 2 of 4.
constexpr char kSweptSpec[] = R"(name = "swept"
seeds = [1, 2, 3]
sweep = { lr = [0.05, 0.1] }
targets = [0.6, 0.8]
target_loss = 0.3
policies = [
  "bsp",
  { sync = "lbbsp:numerical", label = "lb", sweep = {} },
  { sync = "bsp", label = "static", batch = "proportional", sweep = {} },
]

[job]
model = "mlp:8"
data = "synthetic:samples=256:dim=8"
workers = 2
global_batch = 40
clocks = 4
target_accuracy = 0.8
budget_s = 10

[[scenario]]
name = "drift"
hetero = { "*" = "linear=0+0.001", w0 = "x3@2" }
)";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs evaluated after clocks 1..4 (1 s of training each) that reach
// accuracy 0.85 (loss 0.15) from the clock of their group, else 0.5:
// bsp@lr=0.05 at clock 4, bsp@lr=0.1 at 2 (never in seed 3), lb at 1,
// static at 3.
class SweptReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty());
    std::ofstream(dir_ + "/spec.toml") << kSweptSpec;
    auto spec = ParseExperimentSpec(kSweptSpec, "spec.toml");
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    auto runs = PlanExperiment(*spec, dir_, "lockstep-launch");
    ASSERT_TRUE(runs.ok()) << runs.status().message();
    ASSERT_EQ(runs->size(), 12u);
    for (const PlannedRun& run : *runs) WriteSweptRun(run);
  }

  static int ReachClock(const PlannedRun& run) {
    if (run.policy == "bsp@lr=0.05") return 4;
    if (run.policy == "bsp@lr=0.1") return run.seed == 3 ? 99 : 2;
    return run.policy == "lb" ? 1 : 3;
  }

  void WriteSweptRun(const PlannedRun& run) {
    fs::create_directories(run.dir);
    const int reach = ReachClock(run);
    const double final_accuracy = reach <= 4 ? 0.85 : 0.5;
    std::ofstream(run.dir + "/summary.json")
        << "{\"policy\":\"" << run.job.sync
        << "\",\"clocks\":4,\"samples\":160,\"global_batch\":40,"
           "\"wall_s\":4,\"test_accuracy\":"
        << final_accuracy << ",\"test_loss\":" << 1 - final_accuracy
        << ",\"time_to_target_s\":"
        << (reach <= 4 ? std::to_string(reach) : "null") << "}\n";
    std::ofstream eval(run.dir + "/eval.jsonl");
    for (int c = 1; c <= 4; ++c) {
      const double acc = c >= reach ? 0.85 : 0.5;
      eval << "{\"clock\":" << c << ",\"train_s\":" << c
           << ",\"test_loss\":" << 1 - acc << ",\"test_accuracy\":" << acc
           << ",\"final\":" << (c == 4 ? "true" : "false") << "}\n";
    }
    RunRecord record;
    record.status = "ok";
    record.exit = "exited with status 0";
    record.command = run.argv;
    ASSERT_TRUE(WriteRunRecord(run.dir, record).ok());
  }

  TempDir tmp_{"lockstep-swept-report"};
  const std::string dir_ = tmp_.path();
};

TEST_F(SweptReportTest, TheTablesShowEachPolicysBestOfItsSweep) {
  ReportCommand command;
  command.dir = dir_;
  std::ostringstream out, err;
  ASSERT_EQ(RunReportCommand(command, out, err), 0) << err.str();
  const std::string md = ReadText(dir_ + "/report.md");
  // Worker 0 costs 1 ms a sample, then 3 ms from clock 2: 20 + 20 samples
  // take 20 ms and then 60 ms; a perfect split 40 / 2000 s and then
  // 40 / 1333.3 s.
  char bound[32];
  std::snprintf(
      bound, sizeof(bound), "%.2fx",
      (2 * 0.020 + 2 * 0.060) / (2 * 0.020 + 2 * 40 / (1000 / 3.0 + 1000)));
  // bsp@lr=0.1 reaches the target at 2, 2 s and never: median 2; lb at 1 s.
  EXPECT_NE(md.find("| policy | time to target (s) | speedup vs bsp | bound | "
                    "reached |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| bsp@lr=0.1 | 2.0 [2.0, never] | 1.00x | - | 2/3 | 2 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| lb | 1.0 | 2.00x [2.00x, inf] | " + std::string(bound) +
                    " | 3/3 | 1 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| static | 3.0 | 0.67x [0.67x, inf] | " +
                    std::string(bound) + " | 3/3 | 3 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Bound: a perfect batch split's clocks are " +
                    std::string(bound).substr(0, 4) +
                    "x shorter than BSP's even split of X = 40"),
            std::string::npos)
      << md;
  // The sweep: bsp's two points, lr 0.1 the best.
  EXPECT_NE(md.find("### Sweep"), std::string::npos) << md;
  EXPECT_NE(md.find("| bsp@lr=0.05 | 3 (0) | 3/3 | 4.0 | 0.5875 | 0.8500 |  |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| bsp@lr=0.1 | 3 (0) | 2/3 | 2.0 |"), std::string::npos)
      << md;
  EXPECT_EQ(md.find("| bsp@lr=0.05 | 4.0"), std::string::npos) << md;
}

TEST_F(SweptReportTest, EveryTargetTheBudgetAndTheSweepHaveTheirFiles) {
  ReportCommand command;
  command.dir = dir_;
  std::ostringstream out, err;
  ASSERT_EQ(RunReportCommand(command, out, err), 0) << err.str();
  const std::string md = ReadText(dir_ + "/report.md");
  EXPECT_NE(md.find("| lb | accuracy 0.6 | 3/3 | 1.0 | 1 | 40 | 2.00x [2.00x, "
                    "inf] |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| static | loss 0.3 | 3/3 | 3.0 | 3 | 120 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("At the time budget (10 s of training"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| bsp@lr=0.1 | 0.8500 [0.5000, 0.8500] |"),
            std::string::npos)
      << md;
  const std::string sweep = ReadText(dir_ + "/report/sweep.csv");
  EXPECT_NE(sweep.find("\ndrift,bsp,bsp@lr=0.05,0.05,2,ok,4,0.5875,0.85,4,"
                       "0.5875,0.85,time-to-target,0\n"),
            std::string::npos)
      << sweep;
  EXPECT_NE(sweep.find("\ndrift,bsp,bsp@lr=0.1,0.1,3,ok,inf,0.5,0.5,2,"),
            std::string::npos)
      << sweep;
  EXPECT_NE(sweep.find("\ndrift,lb,lb,,1,ok,1,"), std::string::npos) << sweep;
  const std::string targets = ReadText(dir_ + "/report/drift-targets.csv");
  EXPECT_NE(targets.find("\nstatic,loss,0.3,3,3,3,3,3,3,3,3,120,120,120,"),
            std::string::npos)
      << targets;
  const std::string csv = ReadText(dir_ + "/report/drift.csv");
  EXPECT_NE(csv.find(",bound,sweep_point\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",lr=0.1\n"), std::string::npos) << csv;
  // The plots get the chosen runs and every target.
  const std::string json = ReadText(dir_ + "/report/report.json");
  EXPECT_NE(json.find("\"label\": \"bsp@lr=0.1\""), std::string::npos) << json;
  EXPECT_EQ(json.find("bsp_lr_0.05"), std::string::npos) << json;
  EXPECT_NE(json.find("\"targets\": [\n    0.6,\n    0.8\n   ]"),
            std::string::npos)
      << json;
}

}  // namespace
}  // namespace lockstep
