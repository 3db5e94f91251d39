#include "tests/integration/test_cluster.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/security/job_keys.h"
#include "tests/support/http_request.h"

namespace lockstep {

std::string BinaryPath(const std::string& name) {
  return std::string(LOCKSTEP_BIN_DIR) + "/" + name;
}

std::string MakeTempDir(const std::string& prefix) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

pid_t RunningPidOf(TestCluster& cluster, const std::string& binary) {
  for (pid_t pid : cluster.group().running_pids()) {
    if (ReadFile("/proc/" + std::to_string(pid) + "/cmdline").find(binary) !=
        std::string::npos) {
      return pid;
    }
  }
  return 0;
}

pid_t StartedPid(TestCluster& cluster, const std::string& role) {
  const std::regex started("started " + role + R"( \(pid ([0-9]+)\))");
  pid_t pid = 0;
  for (const std::string& line : cluster.Lines("launch")) {
    std::smatch m;
    if (std::regex_search(line, m, started)) pid = std::stoi(m[1]);
  }
  return pid;
}

double JsonNumber(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\":";
  const auto pos = json.find(needle);
  if (pos == std::string::npos) return NAN;
  const char* start = json.c_str() + pos + needle.size();
  char* end = nullptr;
  const double v = std::strtod(start, &end);
  return end == start ? NAN : v;
}

std::string MakeJobKeys() {
  std::string dir = MakeTempDir("lockstep-keys") + "/keys";
  Status made = WriteJobKeys(dir, DataSecurity::kAuth);
  if (!made.ok()) {
    std::fprintf(stderr, "cannot make job keys: %s\n", made.message().c_str());
    std::abort();
  }
  return dir;
}

TestCluster::~TestCluster() {
  group_.TerminateAll(std::chrono::seconds(2));
  if (!keys_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(std::filesystem::path(keys_dir_).parent_path(),
                                ignored);
  }
}

const std::string& TestCluster::keys_dir() {
  if (keys_dir_.empty()) keys_dir_ = MakeJobKeys();
  return keys_dir_;
}

std::vector<std::string> TestCluster::WithKeys(std::vector<std::string> argv) {
  for (const std::string& arg : argv) {
    if (arg == "--keys" || arg == "--security") return argv;
  }
  argv.insert(argv.end(), {"--keys", keys_dir()});
  return argv;
}

void TestCluster::Absorb(ChildEvents&& events) {
  for (auto& line : events.lines) lines_[line.name].push_back(line.text);
  for (auto& exit : events.exits) exits_[exit.name] = exit.how;
}

void TestCluster::Pump(std::chrono::milliseconds timeout) {
  Absorb(group_.Poll(timeout));
}

StatusOr<pid_t> TestCluster::Start(const std::vector<std::string>& argv,
                                   const std::string& name) {
  // A role binary (also behind `env`) or a program joining as a worker
  // (--coordinator) speaks with this cluster's keys.
  for (const std::string& arg : argv) {
    if (arg == "--coordinator") return Spawn(WithKeys(argv), name);
    for (const char* role :
         {"/lockstep-coordinator", "/lockstep-server", "/lockstep-worker"}) {
      const std::string suffix = role;
      if (arg.size() >= suffix.size() &&
          arg.compare(arg.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return Spawn(WithKeys(argv), name);
      }
    }
  }
  return Spawn(argv, name);
}

std::vector<std::string> LaunchCommand(const JobConfig& job,
                                       std::vector<std::string> extra) {
  std::vector<std::string> argv = {BinaryPath("lockstep-launch")};
  for (std::string& arg : LaunchArgs(job, std::move(extra))) {
    argv.push_back(std::move(arg));
  }
  return argv;
}

LauncherRun RunLauncher(const std::vector<std::string>& flags) {
  TestCluster cluster;
  std::vector<std::string> argv = {BinaryPath("lockstep-launch"), "--timeout-s",
                                   "120"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  EXPECT_TRUE(cluster.Start(argv, "launch").ok());
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(150));
  EXPECT_TRUE(exit.ok()) << cluster.Output("launch");
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  return {exit.ok() ? *exit : ExitInfo{}, cluster.Output("launch")};
}

Status TestCluster::StartCoordinator(const JobConfig& job,
                                     const std::vector<std::string>& extra,
                                     bool start_evaluator) {
  return StartCoordinatorWithFlags(LaunchArgs(job, extra),
                                   start_evaluator && job.evaluators > 0);
}

Status TestCluster::StartCoordinatorWithFlags(
    const std::vector<std::string>& flags, bool evaluator) {
  std::vector<std::string> argv = {BinaryPath("lockstep-coordinator"),
                                   "--listen", "tcp://127.0.0.1:0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  LS_RETURN_IF_ERROR(Spawn(WithKeys(argv), "coordinator").status());
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    Pump(std::chrono::milliseconds(100));
    for (const auto& line : lines_["coordinator"]) {
      if (line.rfind("@endpoint ", 0) == 0) {
        endpoint_ = line.substr(10);
        if (!evaluator) return Status::Ok();
        const auto run_dir = std::find(flags.begin(), flags.end(), "--run-dir");
        if (run_dir == flags.end() || run_dir + 1 == flags.end()) {
          return StartEvaluator();
        }
        return StartEvaluator({"--dump-model", *(run_dir + 1) + "/model.bin"});
      }
    }
    if (Exited("coordinator")) {
      return Internal("coordinator exited: " + Output("coordinator"));
    }
  }
  return DeadlineExceeded("coordinator printed no endpoint");
}

Status TestCluster::StartEvaluator(const std::vector<std::string>& extra,
                                   const std::vector<std::string>& program) {
  std::vector<std::string> argv =
      program.empty() ? std::vector<std::string>{BinaryPath("lockstep-worker")}
                      : program;
  argv.insert(argv.end(), {"--coordinator", endpoint_, "--evaluator"});
  argv.insert(argv.end(), extra.begin(), extra.end());
  return Spawn(WithKeys(argv), "evaluator").status();
}

Status TestCluster::StartServer(int rank,
                                const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {BinaryPath("lockstep-server"),
                                   "--coordinator", endpoint_, "--rank",
                                   std::to_string(rank)};
  // A test may choose the data port itself.
  if (std::find(extra.begin(), extra.end(), "--listen") == extra.end()) {
    argv.insert(argv.end(), {"--listen", "tcp://127.0.0.1:0"});
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  return Spawn(WithKeys(argv), "server " + std::to_string(rank)).status();
}

Status TestCluster::StartWorker(int rank,
                                const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {BinaryPath("lockstep-worker"),
                                   "--coordinator", endpoint_, "--rank",
                                   std::to_string(rank)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return Spawn(WithKeys(argv), "worker " + std::to_string(rank)).status();
}

StatusOr<pid_t> TestCluster::Spawn(const std::vector<std::string>& argv,
                                   const std::string& name) {
  StatusOr<pid_t> pid = group_.Spawn(argv, name);
  if (pid.ok()) pids_[name] = *pid;
  return pid;
}

StatusOr<ExitInfo> TestCluster::WaitFor(const std::string& name,
                                        std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!Exited(name)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return DeadlineExceeded(name + " did not exit within " +
                              std::to_string(timeout.count()) + " s");
    }
    Pump(std::chrono::milliseconds(100));
  }
  return exits_[name];
}

bool TestCluster::WaitAll(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (group_.running() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    Pump(std::chrono::milliseconds(100));
  }
  return true;
}

bool TestCluster::Printed(const std::string& name, const std::string& text) {
  for (const std::string& line : lines_[name]) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

bool TestCluster::AwaitPrinted(const std::string& name, const std::string& text,
                               std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Printed(name, text)) return true;
    Pump(std::chrono::milliseconds(100));
  }
  return Printed(name, text);
}

std::string TestCluster::CoordinatorMetrics() {
  std::smatch m;
  for (const std::string& line : lines_["coordinator"]) {
    if (std::regex_match(line, m, std::regex("^@metrics (.*)$"))) {
      return HttpRequest(m[1], "GET /metrics HTTP/1.0\r\n\r\n");
    }
  }
  return "";
}

std::string TestCluster::Output(const std::string& name) {
  std::string out;
  for (const auto& line : lines_[name]) out += line + "\n";
  return out;
}

}  // namespace lockstep
