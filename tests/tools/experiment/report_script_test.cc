// The plotting script (report.py) on the report of runs that give it
// little to draw — a scenario where every run failed, an ok run that left
// no metrics, a policy label the font has no glyphs for and with '$' —
// and with a home it cannot write: it runs with Python's warnings turned
// into errors and must print nothing at all (matplotlib also warns through
// its logger, which -W error does not catch).
#include <gtest/gtest.h>
#include <stdio.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"
#include "tools/experiment/plan.h"
#include "tools/experiment/report.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

constexpr char kSparseSpec[] = R"(name = "sparse"
seeds = [1, 2]
policies = ["bsp", { sync = "asp", label = "策略 $x$" }]

[job]
model = "mlp:8"
data = "synthetic:samples=256:dim=8"
workers = 2
clocks = 4

[[scenario]]
name = "some"

[[scenario]]
name = "none"
)";

// Scenario "some": bsp's runs ok with every file; the other policy's seed
// 1 ok without metrics or evaluations, seed 2 failed. Scenario "none":
// every run failed.
void WriteSparseRun(const PlannedRun& run) {
  fs::create_directories(run.dir);
  RunRecord record;
  record.command = run.argv;
  const bool ok =
      run.scenario == "some" && (run.policy == "bsp" || run.seed == 1);
  record.status = ok ? "ok" : "failed";
  record.exit = ok ? "exited with status 0" : "exited with status 1: boom";
  ASSERT_TRUE(WriteRunRecord(run.dir, record).ok());
  if (!ok) return;
  std::ofstream(run.dir + "/summary.json")
      << "{\"policy\":\"" << run.job.sync
      << "\",\"clocks\":4,\"wall_s\":2,\"test_accuracy\":0.8}\n";
  if (run.policy != "bsp") return;
  std::ofstream metrics(run.dir + "/metrics.jsonl");
  std::ofstream eval(run.dir + "/eval.jsonl");
  for (int c = 0; c < 4; ++c) {
    for (int w = 0; w < 2; ++w) {
      metrics << "{\"worker\":" << w << ",\"clock\":" << c
              << ",\"batch\":32,\"compute_s\":0.003,\"push_s\":0.0005,"
                 "\"pull_s\":0.0005,\"wait_s\":"
              << 0.001 * w << ",\"staleness\":0,\"dropped\":false}\n";
    }
    eval << "{\"clock\":" << c + 1 << ",\"train_s\":" << 0.5 * (c + 1)
         << ",\"test_accuracy\":" << 0.5 + 0.1 * c << "}\n";
  }
}

class ReportScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty());
    std::ofstream(dir_ + "/spec.toml") << kSparseSpec;
    auto spec = ParseExperimentSpec(kSparseSpec, "spec.toml");
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    auto runs = PlanExperiment(*spec, dir_, "lockstep-launch");
    ASSERT_TRUE(runs.ok()) << runs.status().message();
    for (const PlannedRun& run : *runs) WriteSparseRun(run);
    // The tables and report.json, without the plots: the script runs here.
    ReportCommand tables;
    tables.dir = dir_;
    std::ostringstream out, err;
    ASSERT_EQ(RunReportCommand(tables, out, err), 0) << err.str();
  }

  // What the script prints, stdout and stderr together, run with `env`
  // before it; its exit status in `status`.
  std::string RunScript(const std::string& env, int* status) const {
    const std::string script =
        (fs::read_symlink("/proc/self/exe").parent_path() /
         "lockstep-report.py")
            .string();
    const std::string line = "env " + env +
                             " timeout 120 /usr/bin/python3 -W error '" +
                             script + "' '" + dir_ + "' 2>&1";
    FILE* pipe = popen(line.c_str(), "r");
    EXPECT_NE(pipe, nullptr);
    if (pipe == nullptr) return "";
    std::string text;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) {
      text.append(buf, n);
    }
    *status = pclose(pipe);
    return text;
  }

  TempDir tmp_{"lockstep-report-script"};
  const std::string dir_ = tmp_.path();
};

TEST_F(ReportScriptTest, DrawsEveryPlotWithoutAWordWhenThereIsLittleToDraw) {
  int status = -1;
  EXPECT_EQ(RunScript("-u MPLCONFIGDIR", &status), "");
  EXPECT_EQ(status, 0);
  for (const char* scenario : {"some", "none"}) {
    for (const char* kind : {"accuracy-time", "accuracy-clock", "batches",
                             "clock-times", "idle"}) {
      const std::string png =
          dir_ + "/report/" + scenario + "-" + kind + ".png";
      EXPECT_GT(fs::exists(png) ? fs::file_size(png) : 0, 1000u) << png;
    }
  }
  EXPECT_TRUE(fs::exists(dir_ + "/report.html"));
}

TEST_F(ReportScriptTest, AHomeItCannotWriteToGetsNoWordEither) {
  int status = -1;
  EXPECT_EQ(RunScript("-u MPLCONFIGDIR -u XDG_CONFIG_HOME -u XDG_CACHE_HOME "
                      "HOME=/proc/lockstep-no-home",
                      &status),
            "");
  EXPECT_EQ(status, 0);
}

}  // namespace
}  // namespace lockstep
