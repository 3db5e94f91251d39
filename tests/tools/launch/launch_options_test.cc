#include "tools/launch/launch_options.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace lockstep {
namespace {

namespace fs = std::filesystem;

StatusOr<LaunchOptions> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "lockstep-launch");
  return ParseLaunchFlags(static_cast<int>(args.size()), args.data());
}

class LaunchOptionsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!tmp_.empty()) fs::remove_all(tmp_);
  }
  std::string MakeTmp() {
    std::string pattern =
        (fs::temp_directory_path() / "lockstep_launch_options_XXXXXX").string();
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    tmp_ = pattern;
    return tmp_;
  }
  static void MakeExecutable(const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "#!/bin/sh\n";
    chmod(path.c_str(), 0755);
  }

  std::string tmp_;
};

TEST_F(LaunchOptionsTest, ParsesJobAndLauncherFlags) {
  StatusOr<LaunchOptions> o =
      Parse({"--servers", "1", "--workers", "3", "--batch", "8", "-v",
             "--run-dir", "/tmp/r", "--bin-dir", "/opt/b", "--host",
             "127.0.0.2", "--timeout-s", "60", "--clocks", "10"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->job.servers, 1u);
  EXPECT_EQ(o->job.workers, 3u);
  EXPECT_EQ(o->job.max_clocks, 10);
  EXPECT_TRUE(o->verbose);
  EXPECT_EQ(o->run_dir, "/tmp/r");
  EXPECT_EQ(o->bin_dir, "/opt/b");
  EXPECT_EQ(o->host, "127.0.0.2");
  EXPECT_DOUBLE_EQ(o->timeout_s, 60);
  EXPECT_FALSE(o->help);
  ASSERT_EQ(o->command.size(), 18u);
  EXPECT_EQ(o->command[0], "lockstep-launch");
}

TEST_F(LaunchOptionsTest, DefaultsAreQuietLoopbackAndNoTimeout) {
  StatusOr<LaunchOptions> o = Parse({});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_FALSE(o->verbose);
  EXPECT_EQ(o->host, "127.0.0.1");
  EXPECT_EQ(o->timeout_s, 0);
  EXPECT_TRUE(o->run_dir.empty());
  EXPECT_TRUE(o->bin_dir.empty());
  EXPECT_TRUE(o->hetero.empty());
  EXPECT_TRUE(o->hetero_profiles.empty());
  EXPECT_FALSE(o->stop_on_worker_failure);
  EXPECT_EQ(o->data_transport, "auto");
}

TEST_F(LaunchOptionsTest, AutoTransportGivesServersUnixSockets) {
  EXPECT_EQ(DataListenEndpoint("auto", "127.0.0.1", 3, 42),
            "ipc:///tmp/lockstep-42-server-3.sock");
  EXPECT_EQ(DataListenEndpoint("ipc", "127.0.0.1", 0, 42),
            "ipc:///tmp/lockstep-42-server-0.sock");
  EXPECT_EQ(DataListenEndpoint("tcp", "10.0.0.5", 1, 42), "tcp://10.0.0.5:0");
  EXPECT_EQ(DataListenEndpoint("zmq-tcp", "127.0.0.1", 1, 42),
            "zmq+tcp://127.0.0.1:0");
  EXPECT_EQ(DataListenEndpoint("zmq-ipc", "127.0.0.1", 2, 7),
            "zmq+ipc:///tmp/lockstep-7-server-2.sock");
  StatusOr<LaunchOptions> o = Parse({"--data-transport", "zmq-tcp"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->data_transport, "zmq-tcp");
}

TEST_F(LaunchOptionsTest, SplitsHeteroPerWorker) {
  StatusOr<LaunchOptions> o =
      Parse({"--workers", "4", "--hetero", "*:linear=0.002+0.0004;w3:x4@150",
             "--stop-on-worker-failure"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->hetero, "*:linear=0.002+0.0004;w3:x4@150");
  ASSERT_EQ(o->hetero_profiles.size(), 4u);
  EXPECT_EQ(o->hetero_profiles.at(0), "linear=0.002+0.0004");
  EXPECT_EQ(o->hetero_profiles.at(3), "linear=0.002+0.0004,x4@150");
  EXPECT_TRUE(o->stop_on_worker_failure);
  EXPECT_NE(LaunchUsage().find("--hetero"), std::string::npos);
  EXPECT_NE(LaunchUsage().find("--stop-on-worker-failure"), std::string::npos);
}

TEST_F(LaunchOptionsTest, HelpSkipsValidation) {
  StatusOr<LaunchOptions> o = Parse({"--workers", "0", "--help"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_TRUE(o->help);
  EXPECT_NE(LaunchUsage().find("--timeout-s"), std::string::npos);
  EXPECT_NE(LaunchUsage().find("--workers"), std::string::npos);
}

TEST_F(LaunchOptionsTest, RejectsBadInputWithOneLineReason) {
  for (const std::vector<const char*>& args :
       std::vector<std::vector<const char*>>{{"--workers", "0"},
                                             {"--bogus"},
                                             {"--sync", "nope"},
                                             {"--lr", "abc"},
                                             {"--timeout-s", "-1"},
                                             {"--host", ""},
                                             {"--data-transport", "udp"},
                                             {"--hetero", "w9:x2"},
                                             {"--hetero", "w1:x2,bogus"},
                                             {"stray"}}) {
    StatusOr<LaunchOptions> o = Parse(args);
    ASSERT_FALSE(o.ok()) << args[0];
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
    EXPECT_FALSE(o.status().message().empty());
    EXPECT_EQ(o.status().message().find('\n'), std::string::npos);
  }
}

TEST_F(LaunchOptionsTest, FindsBinariesInAnExplicitBinDir) {
  const std::string dir = MakeTmp();
  for (const char* name :
       {"lockstep-coordinator", "lockstep-server", "lockstep-worker"}) {
    MakeExecutable(fs::path(dir) / "bin" / name);
  }
  StatusOr<RoleBinaries> found = FindRoleBinaries(dir + "/bin", "/nowhere");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->coordinator, dir + "/bin/lockstep-coordinator");
  EXPECT_EQ(found->worker, dir + "/bin/lockstep-worker");
}

TEST_F(LaunchOptionsTest, FindsBinariesNextToTheLauncherByDefault) {
  const std::string dir = MakeTmp();
  for (const char* name :
       {"lockstep-coordinator", "lockstep-server", "lockstep-worker"}) {
    MakeExecutable(fs::path(dir) / name);
  }
  StatusOr<RoleBinaries> found = FindRoleBinaries("", dir);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->server, dir + "/lockstep-server");
  EXPECT_EQ(found->worker, dir + "/lockstep-worker");
}

TEST_F(LaunchOptionsTest, NamesAMissingBinary) {
  const std::string dir = MakeTmp();
  MakeExecutable(fs::path(dir) / "lockstep-coordinator");
  MakeExecutable(fs::path(dir) / "lockstep-server");
  StatusOr<RoleBinaries> found = FindRoleBinaries(dir, "");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), StatusCode::kNotFound);
  EXPECT_NE(found.status().message().find("lockstep-worker"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
