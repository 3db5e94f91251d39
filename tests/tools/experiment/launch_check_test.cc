// A spec's launcher flags are checked by the launcher's own parser when
// the experiment is planned: a value it refuses fails the plan, named by
// the spec's file, line, section and key, with the launcher's reason
// (taken here from ParseLaunchFlags itself, so the test holds no copy of
// the launcher's rules either).
#include "tools/experiment/launch_check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/experiment/plan.h"
#include "tools/launch/launch_options.h"

namespace lockstep {
namespace {

constexpr char kLaunchSpec[] = R"(name = "launch"
policies = ["bsp", "asp"]

[job]
model = "mlp:8"
data = "synthetic:samples=256:dim=8"
workers = 2
clocks = 10

[launch]
data_transport = "tcp"

[[scenario]]
name = "a"

[[scenario]]
name = "b"
hetero = "*:linear=0.001+0.0001;w1:x2"
launch = { host = "127.0.0.1" }
)";

// `text` with its first `from` replaced by `to`.
std::string Replaced(std::string text, const std::string& from,
                     const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string LaunchSpecWith(const std::string& from, const std::string& to) {
  return Replaced(kLaunchSpec, from, to);
}

StatusOr<std::vector<PlannedRun>> PlanLaunchSpec(const std::string& text) {
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(text, "spec.toml");
  if (!spec.ok()) return spec.status();
  return PlanExperiment(*spec, "/out", "/bin/lockstep-launch");
}

// Why lockstep-launch refuses `flags` (after argv[0]).
std::string LauncherReason(std::vector<const char*> flags) {
  flags.insert(flags.begin(), "lockstep-launch");
  StatusOr<LaunchOptions> options =
      ParseLaunchFlags(static_cast<int>(flags.size()), flags.data());
  EXPECT_FALSE(options.ok());
  return options.ok() ? "(accepted)" : options.status().message();
}

std::string PlanError(const std::string& text) {
  StatusOr<std::vector<PlannedRun>> runs = PlanLaunchSpec(text);
  EXPECT_FALSE(runs.ok());
  return runs.ok() ? "(planned)" : runs.status().message();
}

TEST(LaunchCheckTest, ARefusedLaunchValueNamesFileLineSectionAndKey) {
  EXPECT_EQ(PlanError(LaunchSpecWith("\"tcp\"", "\"ipcc\"")),
            "spec.toml:11: [launch] data_transport: " +
                LauncherReason({"--data-transport", "ipcc"}));
  EXPECT_EQ(PlanError(LaunchSpecWith("host = \"127.0.0.1\"", "host = \"\"")),
            "spec.toml:19: scenario 'b' launch.host: " +
                LauncherReason({"--host", ""}));
  EXPECT_EQ(PlanError(LaunchSpecWith("data_transport = \"tcp\"",
                                     "device = \"w5:cuda\"")),
            "spec.toml:11: [launch] device: " +
                LauncherReason({"--workers", "2", "--model", "mlp:8", "--data",
                                "synthetic:samples=256:dim=8", "--device",
                                "w5:cuda"}));
}

TEST(LaunchCheckTest, OfTwoFlagsThatConflictTheLaterIsNamed) {
  // Real links need a TCP transport: scenario a's is; b's own is not.
  const std::string links =
      LaunchSpecWith("data_transport = \"tcp\"", "links = \"real\"");
  EXPECT_TRUE(PlanLaunchSpec(links).ok());
  EXPECT_EQ(PlanError(Replaced(links, "host = \"127.0.0.1\"",
                               "data-transport = \"ipc\"")),
            "spec.toml:19: scenario 'b' launch.data-transport: " +
                LauncherReason({"--links", "real", "--data-transport", "ipc"}));
}

TEST(LaunchCheckTest, APlannedRunIsTheJobTheLauncherParsesFromItsCommand) {
  StatusOr<std::vector<PlannedRun>> runs = PlanLaunchSpec(kLaunchSpec);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 4u);
  for (const PlannedRun& run : *runs) {
    std::vector<const char*> argv;
    for (const std::string& a : run.argv) argv.push_back(a.c_str());
    StatusOr<LaunchOptions> options =
        ParseLaunchFlags(static_cast<int>(argv.size()), argv.data());
    ASSERT_TRUE(options.ok()) << options.status().message();
    EXPECT_EQ(options->job.max_clocks, run.job.max_clocks);
    EXPECT_EQ(options->job.batches, run.job.batches);
    EXPECT_EQ(options->job.sync, run.job.sync);
    EXPECT_EQ(options->data_transport, "tcp");
  }
  EXPECT_EQ(runs->back().job.max_clocks, 10);
}

TEST(LaunchCheckTest, AJobTheLauncherRefusesIsNamedByItsRun) {
  LaunchCommand command;
  command.job = {"lockstep-launch", "--workers", "0"};
  command.launch = {{"--host", "127.0.0.1", "spec.toml:3: [launch] host"}};
  StatusOr<JobConfig> job = CheckLaunchCommand(command, "run x: ");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message().rfind("run x: ", 0), 0u)
      << job.status().message();
}

}  // namespace
}  // namespace lockstep
