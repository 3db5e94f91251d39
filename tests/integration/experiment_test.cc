// lockstep-experiment with the real launcher and roles: a tiny experiment
// (2 policies, 2 workers, seconds long) runs end to end and writes its
// report; one interrupted with SIGINT finishes on its second invocation.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// Worker 1 is 3x slower per sample; `clocks` clocks of 64 samples.
std::string TinySpec(int clocks) {
  return R"(name = "tiny"
seeds = [1]
timeout_s = 60
policies = ["bsp", { sync = "lbbsp:numerical", label = "lbbsp-num" }]

[job]
model = "mlp:16"
data = "synthetic:samples=2048:dim=32"
servers = 1
workers = 2
global_batch = 64
eval_every = 10
target_accuracy = 0.9
clocks = )" +
         std::to_string(clocks) +
         R"(

[[scenario]]
name = "one-slow"
hetero = { "*" = "linear=0.001+0.0001", w1 = "x3" }
)";
}

std::string WriteSpec(const std::string& dir, const std::string& text) {
  std::string path = dir + "/spec.toml";
  std::ofstream(path) << text;
  return path;
}

// Runs `lockstep-experiment run SPEC --out OUT` as "experiment" in
// `cluster` and expects it to succeed.
void RunToTheEnd(TestCluster* cluster, const std::string& spec,
                 const std::string& out) {
  ASSERT_TRUE(cluster
                  ->Start({BinaryPath("lockstep-experiment"), "run", spec,
                           "--out", out},
                          "experiment")
                  .ok());
  auto exit = cluster->WaitFor("experiment", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->ok()) << cluster->Output("experiment");
}

TEST(ExperimentTest, ATinyExperimentRunsEndToEndAndTabulatesItsRuns) {
  const std::string dir = MakeTempDir("lockstep-experiment");
  const std::string spec = WriteSpec(dir, TinySpec(60));
  TestCluster cluster;
  RunToTheEnd(&cluster, spec, dir + "/out");
  for (const char* run : {"bsp", "lbbsp-num"}) {
    const std::string run_dir = dir + "/out/one-slow/" + run + "/seed-1";
    EXPECT_NE(ReadFile(run_dir + "/run.json").find("\"status\": \"ok\""),
              std::string::npos)
        << run;
    EXPECT_EQ(JsonNumber(ReadFile(run_dir + "/summary.json"), "clocks"), 60);
    EXPECT_EQ(ReadLines(run_dir + "/metrics.jsonl").size(), 120u);
  }
  const std::string results = ReadFile(dir + "/out/report.md");
  EXPECT_NE(results.find("| bsp | "), std::string::npos) << results;
  EXPECT_NE(results.find("| lbbsp-num | "), std::string::npos) << results;
  EXPECT_NE(results.find("`*:linear=0.001+0.0001;w1:x3`"), std::string::npos)
      << results;
  const std::vector<std::string> csv =
      ReadLines(dir + "/out/report/one-slow.csv");
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[1].rfind("bsp,1,0,", 0), 0u) << csv[1];
  EXPECT_EQ(csv[2].rfind("lbbsp-num,1,0,", 0), 0u) << csv[2];
  EXPECT_NE(ReadFile(dir + "/out/report.html").find("data:image/png;base64,"),
            std::string::npos);
  // LB-BSP gave the slow worker a smaller share of the 64 samples.
  int slow_batches = 0, small = 0;
  for (const std::string& line :
       ReadLines(dir + "/out/one-slow/lbbsp-num/seed-1/metrics.jsonl")) {
    if (line.find("\"worker\":1,") == std::string::npos) continue;
    ++slow_batches;
    if (JsonNumber(line, "batch") < 32) ++small;
  }
  EXPECT_GT(small, slow_batches / 2);
  fs::remove_all(dir);
}

TEST(ExperimentTest, AnInterruptedExperimentFinishesOnItsSecondInvocation) {
  const std::string dir = MakeTempDir("lockstep-experiment");
  // Each run: 150 clocks of at least 0.0064 * 3 s for the slow worker.
  const std::string spec = WriteSpec(dir, TinySpec(150));
  const std::string first = dir + "/out/one-slow/bsp/seed-1";
  const std::string second = dir + "/out/one-slow/lbbsp-num/seed-1";
  {
    TestCluster cluster;
    auto pid = cluster.Start(
        {BinaryPath("lockstep-experiment"), "run", spec, "--out", dir + "/out"},
        "experiment");
    ASSERT_TRUE(pid.ok());
    for (int i = 0; i < 600 && !fs::exists(second + "/metrics.jsonl"); ++i) {
      cluster.Pump(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(fs::exists(second + "/metrics.jsonl"))
        << cluster.Output("experiment");
    kill(*pid, SIGINT);
    auto exit = cluster.WaitFor("experiment", std::chrono::seconds(60));
    ASSERT_TRUE(exit.ok());
    EXPECT_EQ(exit->code, 130) << cluster.Output("experiment");
    EXPECT_TRUE(cluster.Printed("experiment", "interrupted (SIGINT)"));
    EXPECT_TRUE(fs::exists(first + "/run.json"));
    EXPECT_FALSE(fs::exists(second + "/run.json"));
    EXPECT_FALSE(fs::exists(second + "/summary.json"));
  }
  TestCluster cluster;
  RunToTheEnd(&cluster, spec, dir + "/out");
  EXPECT_FALSE(cluster.Printed("experiment", "[1/2]"));
  EXPECT_TRUE(cluster.Printed("experiment", "[2/2] one-slow / lbbsp-num"));
  EXPECT_EQ(JsonNumber(ReadFile(second + "/summary.json"), "clocks"), 150);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
