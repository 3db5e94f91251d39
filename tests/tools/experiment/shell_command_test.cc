// A printed command line is pasted into a shell: here `sh -c` (popen)
// runs it with a stub as the program, which prints the arguments it got,
// NUL-separated, to compare with the argv that was printed.
#include "tools/experiment/shell_command.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tools/experiment/plan.h"
#include "tools/experiment/runner.h"

namespace lockstep {
namespace {

constexpr char kPrintArgs[] = "#!/bin/sh\nprintf '%s\\0' \"$@\"\n";

class ShellCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    // A folder whose name a shell would split, expand and assign.
    const std::string dir = tmp_.path() + "/a=b c's $d";
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    stub_ = dir + "/print-args";
    std::ofstream(stub_) << kPrintArgs;
    ASSERT_EQ(chmod(stub_.c_str(), 0755), 0);
  }

  // The arguments after argv[0] that `sh -c line` passes to the stub.
  static std::vector<std::string> AsAShellReadsIt(const std::string& line) {
    FILE* shell = popen(line.c_str(), "r");
    EXPECT_NE(shell, nullptr);
    if (shell == nullptr) return {};
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), shell)) > 0;) {
      out.append(buf, n);
    }
    EXPECT_EQ(pclose(shell), 0) << line;
    std::vector<std::string> args;
    for (size_t at = 0, end; (end = out.find('\0', at)) != std::string::npos;
         at = end + 1) {
      args.push_back(out.substr(at, end - at));
    }
    return args;
  }

  TempDir tmp_{"lockstep-shell-command"};
  std::string stub_;
};

TEST_F(ShellCommandTest, QuotesOnlyWhatAShellWouldRead) {
  EXPECT_EQ(ShellQuote("--data-transport"), "--data-transport");
  EXPECT_EQ(ShellQuote("synthetic:samples=256:dim=8"),
            "synthetic:samples=256:dim=8");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("*:x2;w1:x3"), "'*:x2;w1:x3'");
}

TEST_F(ShellCommandTest, AShellReadsTheLineBackAsTheArgv) {
  const std::vector<std::string> args = {
      "--test-data", "",      "--hetero", "*:linear=0.001+0.0001;w1:x2",
      "a b",         "it's",  "\"q\"",    "$HOME",
      "`id`",        "$(id)", "back\\",   "new\nline",
      "~",           "#c",    "!x",       "a=b",
      "&|<>(){}",    "\t",    "-",        "caf\xc3\xa9"};
  std::vector<std::string> argv = {stub_};
  argv.insert(argv.end(), args.begin(), args.end());
  EXPECT_EQ(AsAShellReadsIt(ShellCommandLine(argv)), args);
}

TEST_F(ShellCommandTest, ADryRunPrintsTheFirstRunsCommandReadyToPaste) {
  constexpr char kSpec[] = R"(name = "paste"
policies = ["bsp"]
[job]
model = "mlp:8"
data = "synthetic:samples=256:dim=8"
workers = 2
clocks = 10
[[scenario]]
name = "slow-one"
hetero = "*:linear=0.001+0.0001;w1:x2"
)";
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(kSpec, "spec.toml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const std::string out = tmp_.path() + "/out dir";
  StatusOr<std::vector<PlannedRun>> runs = PlanExperiment(*spec, out, stub_);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  RunnerOptions options;
  options.out_dir = out;
  options.dry_run = true;
  std::ostringstream log;
  ASSERT_TRUE(RunExperimentPlan(*spec, *runs, options, log).ok());
  const std::string text = log.str();
  const std::string intro = "command of the first run:\n  ";
  const size_t at = text.find(intro);
  ASSERT_NE(at, std::string::npos) << text;
  const size_t from = at + intro.size();
  const std::string line = text.substr(from, text.find('\n', from) - from);
  const std::vector<std::string> argv = runs->front().argv;
  // The job's empty defaults (--test-data '') are in it, and the profiles.
  ASSERT_NE(std::find(argv.begin(), argv.end(), ""), argv.end());
  EXPECT_EQ(AsAShellReadsIt(line),
            std::vector<std::string>(argv.begin() + 1, argv.end()))
      << line;
}

}  // namespace
}  // namespace lockstep
