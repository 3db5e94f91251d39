// `lockstep-experiment run` as a user meets it, against a fake launcher (a
// shell script that records each launch and fails as told): a value the
// launcher would refuse stops everything before a run starts; when every
// run fails no report is written and the first failure is shown; when some
// fail the report says which and why.
#include "tools/experiment/experiment.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// FAILS is a case pattern of the --sync values that fail.
constexpr char kFailingLauncher[] = R"(#!/bin/sh
prev=""
for a in "$@"; do
  [ "$prev" = --run-dir ] && dir=$a
  [ "$prev" = --sync ] && sync=$a
  prev=$a
done
echo "$sync" >> "$(dirname "$0")/launches"
mkdir -p "$dir"
case "$sync" in
  FAILS) echo "lockstep-launch: worker 1 exploded" >&2; exit 1 ;;
esac
echo "{\"policy\":\"$sync\",\"clocks\":10,\"wall_s\":1,\"test_accuracy\":0.9,\"samples_per_s\":100,\"time_to_target_s\":null,\"compute_share\":0.5,\"push_share\":0.1,\"pull_share\":0.1,\"wait_share\":0.3}" > "$dir/summary.json"
)";

constexpr char kCommandSpec[] = R"(name = "command"
policies = ["bsp", "asp"]

[job]
model = "mlp:8"
data = "synthetic:samples=256:dim=8"
workers = 2
clocks = 10

[launch]
data_transport = "tcp"
)";

std::string ReadCommandFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ExperimentCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.empty()); }

  // Runs `spec` with a launcher that fails the policies `fails` matches.
  int Run(const std::string& spec, const std::string& fails,
          bool dry_run = false) {
    std::string script = kFailingLauncher;
    script.replace(script.find("FAILS"), 5, fails);
    std::ofstream(tmp_ + "/launch") << script;
    chmod((tmp_ + "/launch").c_str(), 0755);
    // The role binaries a launcher needs beside it (CheckLaunchHost).
    for (const char* role :
         {"lockstep-coordinator", "lockstep-server", "lockstep-worker"}) {
      const std::string path = tmp_ + "/" + role;
      if (!with_roles_) {
        fs::remove(path);
        continue;
      }
      std::ofstream(path) << "#!/bin/sh\nexit 1\n";
      chmod(path.c_str(), 0755);
    }
    std::ofstream(tmp_ + "/spec.toml") << spec;
    ExperimentCommand command;
    command.spec_path = tmp_ + "/spec.toml";
    command.out_dir = out_;
    command.launcher = tmp_ + "/launch";
    command.runner.dry_run = dry_run;
    out_text_.str("");
    err_text_.str("");
    return RunExperimentCommand(command, out_text_, err_text_);
  }

  std::string LogOf(const std::string& run) const {
    return out_ + "/uniform/" + run + "/seed-1/launcher.log";
  }

  bool with_roles_ = true;
  TempDir dir_{"lockstep-experiment-command"};
  const std::string tmp_ = dir_.path();
  const std::string out_ = tmp_ + "/out";
  std::ostringstream out_text_, err_text_;
};

// A launcher without its role binaries could run nothing: said before the
// first run, as lockstep-launch itself would say it.
TEST_F(ExperimentCommandTest, ALauncherWithoutItsRolesStopsAllAtOnce) {
  with_roles_ = false;
  for (bool dry_run : {true, false}) {
    EXPECT_EQ(Run(kCommandSpec, "none", dry_run), 2);
    EXPECT_NE(
        err_text_.str().find("no executable lockstep-coordinator in " + tmp_),
        std::string::npos)
        << err_text_.str();
    EXPECT_FALSE(fs::exists(tmp_ + "/launches"));
  }
}

TEST_F(ExperimentCommandTest, ALaunchValueTheLauncherRefusesStopsAllAtOnce) {
  std::string spec = kCommandSpec;
  spec.replace(spec.find("\"tcp\""), 5, "\"ipcc\"");
  for (bool dry_run : {true, false}) {
    EXPECT_EQ(Run(spec, "none", dry_run), 2);
    EXPECT_EQ(err_text_.str(),
              "lockstep-experiment: " + tmp_ +
                  "/spec.toml:11: [launch] data_transport: --data-transport "
                  "'ipcc' is not one of auto, ipc, tcp, zmq-ipc, zmq-tcp\n");
    EXPECT_FALSE(fs::exists(tmp_ + "/launches"));
    EXPECT_FALSE(fs::exists(out_));
  }
}

TEST_F(ExperimentCommandTest,
       WhenEveryRunFailsNoReportIsWrittenAndTheyAreShown) {
  EXPECT_EQ(Run(kCommandSpec, "*"), 1);
  EXPECT_EQ(ReadCommandFile(tmp_ + "/launches"), "bsp\nasp\n");
  const std::string why =
      "every recorded run failed (2 of 2 planned), so there is no result to "
      "report; the first: uniform / bsp / seed 1: failed (exited with status "
      "1: lockstep-launch: worker 1 exploded); log: " +
      LogOf("bsp") + "\n";
  EXPECT_EQ(err_text_.str(),
            "lockstep-experiment: no report of " + out_ + ": " + why);
  EXPECT_NE(ReadCommandFile(LogOf("bsp")).find("exploded"), std::string::npos);
  EXPECT_FALSE(fs::exists(out_ + "/report.md"));
  EXPECT_FALSE(fs::exists(out_ + "/report"));
  EXPECT_EQ(out_text_.str().find("| policy |"), std::string::npos)
      << out_text_.str();
  // `report DIR` refuses the same way.
  ReportCommand report;
  report.dir = out_;
  std::ostringstream out, err;
  EXPECT_EQ(RunReportCommand(report, out, err), 1);
  EXPECT_EQ(err.str(),
            "lockstep-experiment: no report of " + out_ + ": " + why);
  EXPECT_FALSE(fs::exists(out_ + "/report.md"));
}

TEST_F(ExperimentCommandTest, WhenSomeRunsFailTheReportSaysWhichAndWhy) {
  EXPECT_EQ(Run(kCommandSpec, "asp"), 1);
  const std::string md = ReadCommandFile(out_ + "/report.md");
  const std::string failed =
      "**1 of 2 runs failed or timed out**; the tables count them in the runs "
      "(failed) column and leave their numbers out:\n\n- "
      "uniform / asp / seed 1: failed (exited with status 1: lockstep-launch: "
      "worker 1 exploded); log: " +
      LogOf("asp") + "\n";
  EXPECT_LT(md.find(failed), md.find("## uniform")) << md;
  // Its numbers are absent, not "nan".
  EXPECT_NE(md.find("| asp | - / - / - / - | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("| bsp | 50 / 10 / 10 / 30 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("nan"), std::string::npos) << md;
  // The terminal shows it with the tables.
  EXPECT_NE(out_text_.str().find(failed), std::string::npos) << out_text_.str();
  EXPECT_EQ(out_text_.str().find("\n\n\n"), std::string::npos)
      << out_text_.str();
}

}  // namespace
}  // namespace lockstep
