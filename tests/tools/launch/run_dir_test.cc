#include "tools/launch/run_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/wire/message.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class RunDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "lockstep_run_dir_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    tmp_ = pattern;
  }
  void TearDown() override { fs::remove_all(tmp_); }

  std::string tmp_;
};

TEST_F(RunDirTest, CreatesTheDirectoryWithLogsAndParents) {
  const std::string dir = tmp_ + "/a/b/run";
  ASSERT_TRUE(CreateRunDir(dir).ok());
  EXPECT_TRUE(fs::is_directory(dir + "/logs"));
  // An existing run directory is reused.
  EXPECT_TRUE(CreateRunDir(dir).ok());
}

TEST_F(RunDirTest, CreateFreshRunDirNeverReusesADirectory) {
  StatusOr<std::string> first = CreateFreshRunDir(tmp_ + "/runs/x-bsp");
  StatusOr<std::string> second = CreateFreshRunDir(tmp_ + "/runs/x-bsp");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*first, tmp_ + "/runs/x-bsp");
  EXPECT_EQ(*second, tmp_ + "/runs/x-bsp-2");
  EXPECT_TRUE(fs::is_directory(*second + "/logs"));
}

TEST_F(RunDirTest, FailsWhereADirectoryCannotBe) {
  std::ofstream(tmp_ + "/file") << "x";
  EXPECT_FALSE(CreateRunDir(tmp_ + "/file/run").ok());
}

TEST_F(RunDirTest, DefaultNameIsTimestampAndSafePolicy) {
  EXPECT_EQ(DefaultRunDirName("bsp", 0), "runs/19700101T000000Z-bsp");
  EXPECT_EQ(DefaultRunDirName("ssp:3", 86400 + 3661),
            "runs/19700102T010101Z-ssp_3");
  EXPECT_EQ(DefaultRunDirName("lbbsp[a/b]", 0),
            "runs/19700101T000000Z-lbbsp_a_b_");
  EXPECT_EQ(UtcTimestamp(0), "1970-01-01T00:00:00Z");
}

TEST_F(RunDirTest, NamesRoleLogs) {
  EXPECT_EQ(RoleLogPath("/r", "coordinator", 0), "/r/logs/coordinator.log");
  EXPECT_EQ(RoleLogPath("/r", "worker", 2), "/r/logs/worker-2.log");
  EXPECT_EQ(RoleLogPath("/r", "server", 0), "/r/logs/server-0.log");
}

TEST_F(RunDirTest, MachineInfoDescribesThisMachine) {
  const MachineInfo machine = MachineInfo::Current();
  EXPECT_FALSE(machine.hostname.empty());
  EXPECT_GT(machine.nproc, 0u);
  EXPECT_GT(machine.mem_total_kb, 0u);
  EXPECT_EQ(machine.kernel.rfind("Linux ", 0), 0u) << machine.kernel;
  EXPECT_FALSE(machine.compiler.empty());
}

TEST_F(RunDirTest, WritesConfigJsonWithJobAndContext) {
  JobConfig job;
  job.workers = 3;
  job.servers = 1;
  job.sync = "bsp";
  job.batches = {16, 16, 32};
  job.lr = 0.25;
  MachineInfo machine;
  machine.hostname = "host-a";
  machine.nproc = 8;
  machine.mem_total_kb = 1024;
  machine.kernel = "Linux 6.1 x86_64";
  machine.compiler = "12.2.0";
  const std::string path = tmp_ + "/config.json";
  ASSERT_TRUE(
      WriteFileAtomically(
          path, ConfigJson(job, {"lockstep-launch", "--workers", "3"}, machine,
                           "2024-05-01T12:00:00Z", "{\"host\":\"127.0.0.1\"}",
                           "{\"3\":\"x4@150\"}"))
          .ok());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  const std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.front(), '{');
  EXPECT_EQ(text.substr(text.size() - 2), "}\n");
  for (const std::string& want : {
           std::string("\"job\":{"),
           std::string("\"workers\":3"),
           std::string("\"servers\":1"),
           std::string("\"sync\":\"bsp\""),
           std::string("\"batches\":[16,16,32]"),
           std::string("\"lr\":0.25"),
           std::string("\"model\":\"mlp:256,128\""),
           std::string("\"command\":[\"lockstep-launch\",\"--workers\",\"3\"]"),
           std::string("\"lockstep_version\":\"0.1.0\""),
           "\"protocol_version\":" + std::to_string(kProtocolVersion),
           std::string("\"hostname\":\"host-a\""),
           std::string("\"nproc\":8"),
           std::string("\"mem_total_kb\":1024"),
           std::string("\"kernel\":\"Linux 6.1 x86_64\""),
           std::string("\"compiler\":\"12.2.0\""),
           std::string("\"start_time_utc\":\"2024-05-01T12:00:00Z\""),
           std::string("\"launcher\":{\"host\":\"127.0.0.1\"}"),
           std::string("\"hetero\":{\"3\":\"x4@150\"}"),
       }) {
    EXPECT_NE(text.find(want), std::string::npos) << want << " in " << text;
  }
}

}  // namespace
}  // namespace lockstep
