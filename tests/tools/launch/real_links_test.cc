// `lockstep-launch --links real`: every role in a network namespace, each
// worker behind a veth pair that tc shapes with its net= link. Runs a real
// job (real binaries) and checks the shaped worker's pulls and pushes
// really take the link's time, before and after a step of the schedule,
// while an unshaped worker's do not; and that no namespace outlives the
// launcher. Skipped, with the reason, where namespaces cannot be made
// (not root, no iproute2, a sandbox refusing them).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/subprocess.h"
#include "tests/support/launch_args.h"
#include "tools/launch/net_lab.h"
#include "tools/launch/process_group.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

fs::path BinDir() { return fs::read_symlink("/proc/self/exe").parent_path(); }

// Namespaces whose name contains `text`.
std::vector<std::string> Namespaces(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator("/run/netns")) {
    const std::string name = entry.path().filename().string();
    if (name.find(text) != std::string::npos) out.push_back(name);
  }
  return out;
}

struct Transfer {
  double pull_s = 0, push_s = 0;
  int clocks = 0;
};

// Mean pull and push seconds of `worker` over clocks [from, to).
Transfer Mean(const fs::path& metrics, uint32_t worker, int64_t from,
              int64_t to) {
  std::ifstream in(metrics);
  const std::regex re(
      R"re("worker":(\d+),"clock":(\d+),.*"push_s":([0-9.e-]+),"pull_s":([0-9.e-]+))re");
  Transfer t;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, re)) continue;
    const int64_t clock = std::stoll(m[2]);
    if (std::stoul(m[1]) != worker || clock < from || clock >= to) continue;
    t.push_s += std::stod(m[3]);
    t.pull_s += std::stod(m[4]);
    ++t.clocks;
  }
  if (t.clocks > 0) {
    t.pull_s /= t.clocks;
    t.push_s /= t.clocks;
  }
  return t;
}

TEST(RealLinksTest, AShapedWorkersBytesCrossItsLinkAndNothingIsLeftBehind) {
  if (const std::string why = NetLab::Unavailable(); !why.empty()) {
    GTEST_SKIP() << "the real network path needs namespaces: " << why;
  }
  const fs::path run_dir =
      fs::temp_directory_path() / ("real-links-" + std::to_string(getpid()));
  fs::remove_all(run_dir);
  // mlp:256 on 100 inputs, 10 classes: 28426 parameters, 113704 bytes per
  // pull and per push. Worker 1 crosses 200 Mbit/s for 10 clocks, then
  // 20 Mbit/s with 10 ms: 113704 * 8 / 20e6 + 0.010 = 55.5 ms.
  JobConfig job;
  job.workers = 2;
  job.servers = 2;
  job.model = "mlp:256";
  job.data = "synthetic:samples=2000:test=200:dim=100:classes=10";
  job.batches = {32};
  job.max_clocks = 24;
  job.eval_every = 0;
  std::vector<std::string> argv = {(BinDir() / "lockstep-launch").string()};
  for (std::string& arg : LaunchArgs(
           job, {"--links", "real", "--run-dir", run_dir.string(), "--hetero",
                 "w1:net=200/1,net=20/10@10", "--timeout-s", "100"})) {
    argv.push_back(std::move(arg));
  }
  ProcessGroup group;
  StatusOr<pid_t> pid = group.Spawn(argv, "lockstep-launch");
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  const std::string tag = "lockstep-" + std::to_string(*pid) + "-";
  std::string output;
  bool saw_namespaces = false;
  int code = -1;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(110);
  while (group.running() > 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      group.TerminateAll(std::chrono::milliseconds(3000));
      FAIL() << "the launcher ran past the test's limit:\n" << output;
    }
    saw_namespaces = saw_namespaces || Namespaces(tag).size() == 3;
    ChildEvents events = group.Poll(std::chrono::milliseconds(50));
    for (const ChildLine& line : events.lines) output += line.text + "\n";
    for (const ChildExit& exit : events.exits) code = exit.how.code;
  }
  EXPECT_EQ(code, 0) << output;
  EXPECT_TRUE(saw_namespaces) << "no hub + 2 worker namespaces seen";
  EXPECT_TRUE(Namespaces(tag).empty()) << "namespaces left behind";

  const fs::path metrics = run_dir / "metrics.jsonl";
  const Transfer fast = Mean(metrics, 1, 1, 10);
  const Transfer slow = Mean(metrics, 1, 12, 24);
  const Transfer free = Mean(metrics, 0, 12, 24);
  fs::remove_all(run_dir);
  ASSERT_GT(slow.clocks, 5) << output;
  const double expected = 113704 * 8 / 20e6 + 0.010;
  std::cout << "worker 1 at 20 Mbit/s + 10 ms: pull " << slow.pull_s * 1e3
            << " ms, push " << slow.push_s * 1e3
            << " ms (link: " << expected * 1e3
            << " ms); at 200 Mbit/s + 1 ms: pull " << fast.pull_s * 1e3
            << " ms; unshaped worker 0: pull " << free.pull_s * 1e3 << " ms\n";
  for (double t : {slow.pull_s, slow.push_s}) {
    EXPECT_GT(t, 0.8 * expected);
    EXPECT_LT(t, 4.0 * expected);
  }
  EXPECT_LT(fast.pull_s, 0.4 * slow.pull_s) << "the step at clock 10";
  EXPECT_LT(free.pull_s, 0.2 * slow.pull_s) << "worker 0 has no link";
}

}  // namespace
}  // namespace lockstep
