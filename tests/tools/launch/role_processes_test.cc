#include "tools/launch/role_processes.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/launch/run_dir.h"

namespace lockstep {
namespace {

TEST(RoleLabelTest, OnlyServersAndWorkersCarryARank) {
  EXPECT_EQ(RoleLabel("coordinator", 0), "coordinator");
  EXPECT_EQ(RoleLabel("evaluator", 0), "evaluator");
  EXPECT_EQ(RoleLabel("server", 1), "server 1");
  EXPECT_EQ(RoleLabel("worker", 0), "worker 0");
}

class RoleProcessesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() /
                           "lockstep_role_processes_test_XXXXXX")
                              .string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ASSERT_TRUE(CreateRunDir(dir_).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string LogText(const std::string& role, int rank) const {
    std::ifstream in(RoleLogPath(dir_, role, rank));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // Starts a coordinator that exits at once, and waits until it did.
  RoleProcess& StartCoordinator(RoleProcesses& roles) {
    EXPECT_TRUE(roles.Start(dir_, "coordinator", 0, {"true"}).ok());
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (roles.running() > 0 && std::chrono::steady_clock::now() < deadline) {
      roles.Poll(std::chrono::milliseconds(50));
    }
    return *roles.Find(roles.coordinator_pid());
  }

  std::string dir_;
  Console console_{stdout, stderr, /*tty=*/false, /*verbose=*/false};
};

TEST_F(RoleProcessesTest, ALineGoesToTheLogAndTheLastOnesToTheTail) {
  RoleProcess role;
  role.log.reset(std::fopen(RoleLogPath(dir_, "worker", 1).c_str(), "we"));
  ASSERT_TRUE(role.log);
  const size_t lines = RoleProcesses::kTailLines + 5;
  for (size_t i = 0; i < lines; ++i) {
    RoleProcesses::RecordLine(role, "line " + std::to_string(i));
  }
  RoleProcesses::RecordNote(role, "worker 1 (pid 7) exited with status 0");
  ASSERT_EQ(role.tail.size(), RoleProcesses::kTailLines);
  EXPECT_EQ(role.tail.front(), "line 5");
  EXPECT_EQ(role.tail.back(), "line " + std::to_string(lines - 1));
  const std::string log = LogText("worker", 1);
  EXPECT_EQ(log.rfind("line 0\nline 1\n", 0), 0u);
  EXPECT_NE(log.find("line 24\n# lockstep-launch: worker 1 (pid 7) exited "
                     "with status 0\n"),
            std::string::npos);
}

// A log holds every start of its role, a resumed run's too: nothing is
// written over, and each start is noted with its pid.
TEST_F(RoleProcessesTest, EveryStartAppendsToTheLogAndIsNoted) {
  std::ofstream(RoleLogPath(dir_, "coordinator", 0)) << "an earlier part\n";
  RoleProcesses roles(&console_, false);
  RoleProcess& first = StartCoordinator(roles);
  EXPECT_EQ(first.label, "coordinator");
  RoleProcesses::RecordNote(first, "first start");
  StartCoordinator(roles);
  const std::string log = LogText("coordinator", 0);
  EXPECT_EQ(log.rfind("an earlier part\n# lockstep-launch: started "
                      "coordinator (pid ",
                      0),
            0u)
      << log;
  const size_t note = log.find("# lockstep-launch: first start\n");
  ASSERT_NE(note, std::string::npos) << log;
  EXPECT_NE(log.find("# lockstep-launch: started coordinator (pid ", note),
            std::string::npos)
      << "the restart, noted after: " << log;
  EXPECT_EQ(roles.running(), 0u);
}

TEST_F(RoleProcessesTest, ARoleThatCannotStartIsAnError) {
  RoleProcesses roles(&console_, false);
  EXPECT_FALSE(
      roles.Start(dir_, "worker", 0, {dir_ + "/no-such-program"}).ok());
  EXPECT_EQ(roles.running(), 0u);
  EXPECT_EQ(roles.Find(roles.coordinator_pid()), nullptr);
}

}  // namespace
}  // namespace lockstep
