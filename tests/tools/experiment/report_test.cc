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
  // Speedups by seed: 10/5 = 2 and 12/8 = 1.5.
  EXPECT_NE(md.find("| bsp | 11.0 (10.0-12.0) | 1.00x | 2/2 | 3 | 5000.0 | "
                    "100 | 0.8500 | 20.0 | 2 (0) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| lb | 6.5 (5.0-8.0) | 1.75x (1.50-2.00) | 2/2 | 2 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| bsp | 50 / 10 / 10 / 30 | 0 / 75 | 0 | 0 / 2 | 0.10 | "
                    "- |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| lb | 50 / 10 / 10 / 30 | 0 / 25 | 0 | 0 / 2 | 0.10 | "
                    "1.4 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**Published: lb over bsp 1.54x. Here: 1.75x (1.50-2.00) "
                    "over 2 seed(s).**"),
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
