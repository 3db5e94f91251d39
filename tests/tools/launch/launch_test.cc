// End-to-end tests of the lockstep-launch binary against fake role binaries:
// shell scripts that print @endpoint / @progress / @summary and record the
// pids of everything they start, so the tests can check nothing survives.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "tests/support/launch_args.h"
#include "tests/tools/launch/process_alive.h"
#include "tools/launch/process_group.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every binary of the build, tests included, sits in build/bin.
fs::path LauncherPath() {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  return self.parent_path() / "lockstep-launch";
}

// Common start of every fake role: record its pid, read its --rank.
constexpr char kPreamble[] = R"(#!/bin/sh
echo $$ >> "$FAKE_DIR/pids"
rank=0
for a in "$@"; do [ "$prev" = --rank ] && rank=$a; prev=$a; done
# Blocks "forever" in a helper whose pid is recorded too.
hang() { sleep 100 & echo $! >> "$FAKE_DIR/pids"; wait; }
echo "2024-01-01T00:00:00.000Z INFO role=$ROLE rank=$rank args $*" >&2
)";

// The job the fake roles pretend to run: only its shape matters to them.
JobConfig Job(uint32_t servers, uint32_t workers) {
  JobConfig job;
  job.servers = servers;
  job.workers = workers;
  return job;
}

constexpr char kGoodCoordinator[] = R"(
echo "@endpoint tcp://127.0.0.1:5555"
sleep 0.2
echo "@progress clock=5 max_clocks=10 epoch=0.50 samples_per_s=100.0 train_loss=0.9 test_accuracy=nan"
echo "@progress clock=10 max_clocks=10 epoch=1.00 samples_per_s=120.0 train_loss=0.5 test_accuracy=0.75"
echo '@summary {"policy":"bsp","clocks":10,"wall_s":0.4,"samples_per_s":120.0,"test_accuracy":0.75,"time_to_target_s":null}'
)";

struct LaunchResult {
  ExitInfo how;
  std::string out;
  std::string err;
  double seconds = 0;
};

class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "lockstep_launch_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    setenv("FAKE_DIR", dir_.c_str(), 1);
    ASSERT_TRUE(fs::exists(LauncherPath()))
        << LauncherPath() << " is missing: build lockstep-launch first";
  }

  void TearDown() override {
    // A SIGKILLed helper may take a moment to die after the launcher exits.
    const auto deadline = steady_clock::now() + milliseconds(5000);
    for (pid_t pid : RecordedPids()) {
      while (ProcessAlive(pid) && steady_clock::now() < deadline) usleep(10000);
      if (ProcessAlive(pid)) ADD_FAILURE() << "pid " << pid << " survived";
    }
    fs::remove_all(dir_);
  }

  // Writes the fake role `name` (lockstep-<name>) with `body`.
  void WriteRole(const std::string& name, const std::string& body) {
    const fs::path path = dir_ / "bin" / ("lockstep-" + name);
    fs::create_directories(path.parent_path());
    std::ofstream(path) << kPreamble << "ROLE=" << name << "\n" << body;
    chmod(path.c_str(), 0755);
  }

  std::vector<pid_t> RecordedPids() const {
    std::vector<pid_t> pids;
    std::ifstream in(dir_ / "pids");
    for (pid_t pid; in >> pid;) pids.push_back(pid);
    return pids;
  }

  // Runs the launcher with `flags`; stops it and fails after `limit`. If
  // `interrupt_after_pids` > 0, sends it SIGINT once that many pids are
  // recorded.
  LaunchResult Launch(std::vector<std::string> flags,
                      milliseconds limit = milliseconds(30000),
                      size_t interrupt_after_pids = 0) {
    std::vector<std::string> argv = {LauncherPath().string(), "--bin-dir",
                                     (dir_ / "bin").string(), "--run-dir",
                                     run_dir().string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    ProcessGroup group;
    LaunchResult result;
    StatusOr<pid_t> pid = group.Spawn(argv, "lockstep-launch");
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    if (!pid.ok()) return result;
    const auto start = steady_clock::now();
    bool interrupted = false;
    while (group.running() > 0) {
      if (steady_clock::now() - start > limit) {
        ADD_FAILURE() << "lockstep-launch ran longer than the test's limit";
        group.TerminateAll(milliseconds(3000));
        break;
      }
      if (interrupt_after_pids > 0 && !interrupted &&
          RecordedPids().size() >= interrupt_after_pids) {
        kill(*pid, SIGINT);
        interrupted = true;
      }
      ChildEvents events = group.Poll(milliseconds(50));
      for (const ChildLine& line : events.lines) {
        (line.from_stderr ? result.err : result.out) += line.text + "\n";
      }
      for (const ChildExit& exit : events.exits) result.how = exit.how;
    }
    result.seconds =
        std::chrono::duration<double>(steady_clock::now() - start).count();
    return result;
  }

  fs::path run_dir() const { return dir_ / "run"; }

  fs::path dir_;
};

TEST_F(LaunchTest, NormalRunExitsZeroAndWritesTheRunDir) {
  WriteRole("coordinator", kGoodCoordinator);
  WriteRole("server", "sleep 0.3\n");
  WriteRole("worker", "sleep 0.3\n");
  JobConfig job = Job(2, 3);
  job.max_clocks = 10;  // the fake coordinator reports clock 10/10
  LaunchResult r = Launch(LaunchArgs(job));
  ASSERT_TRUE(r.how.ok()) << r.how.ToString() << "\n" << r.out << r.err;
  EXPECT_NE(r.out.find("clock 10/10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("done: policy bsp  clocks 10"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("run dir: " + run_dir().string()), std::string::npos)
      << r.out;
  // Quiet: INFO lines of the roles are not shown.
  EXPECT_EQ(r.out.find("args"), std::string::npos) << r.out;

  const std::string config = ReadFile(run_dir() / "config.json");
  EXPECT_NE(config.find("\"workers\":3"), std::string::npos) << config;
  EXPECT_NE(config.find("\"max_clocks\":10"), std::string::npos) << config;
  EXPECT_NE(config.find("\"command\":[\""), std::string::npos) << config;
  EXPECT_NE(config.find("\"machine\":{"), std::string::npos) << config;
  const fs::path logs = run_dir() / "logs";
  for (const char* name : {"coordinator.log", "server-0.log", "server-1.log",
                           "worker-0.log", "worker-1.log", "worker-2.log"}) {
    EXPECT_TRUE(fs::exists(logs / name)) << name;
  }
  const std::string coordinator_log = ReadFile(logs / "coordinator.log");
  EXPECT_NE(coordinator_log.find("@endpoint tcp://127.0.0.1:5555"),
            std::string::npos);
  EXPECT_NE(coordinator_log.find("--listen tcp://127.0.0.1:0 --run-dir " +
                                 run_dir().string()),
            std::string::npos)
      << coordinator_log;
  // Each role gets its own file of the job's keys, made in the run dir.
  const std::string keys = run_dir().string() + "/keys/";
  EXPECT_NE(ReadFile(logs / "worker-2.log")
                .find("args --coordinator tcp://127.0.0.1:5555 --keys " + keys +
                      "worker.key --rank 2"),
            std::string::npos);
  for (const char* role : {"coordinator", "server", "worker", "admin"}) {
    EXPECT_TRUE(fs::exists(keys + role + ".key")) << role;
  }
  // Same-machine servers get a Unix-socket data port (--data-transport
  // auto), named after the launcher's pid and the server's rank.
  const std::string server_log = ReadFile(logs / "server-1.log");
  EXPECT_NE(server_log.find("--coordinator tcp://127.0.0.1:5555 --keys " +
                            keys + "server.key --listen ipc:///tmp/lockstep-"),
            std::string::npos)
      << server_log;
  EXPECT_NE(server_log.find("-server-1.sock --rank 1"), std::string::npos)
      << server_log;
}

TEST_F(LaunchTest, VerboseShowsEveryRoleLine) {
  WriteRole("coordinator", kGoodCoordinator);
  WriteRole("server", "");
  WriteRole("worker", "");
  LaunchResult r = Launch(LaunchArgs(Job(1, 2), {"-v"}));
  ASSERT_TRUE(r.how.ok()) << r.how.ToString() << "\n" << r.out << r.err;
  EXPECT_NE(r.out.find("[coordinator] "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[server 0] "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[worker 1] "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--rank 1 -v"), std::string::npos) << r.out;
}

TEST_F(LaunchTest, FailingWorkerStopsTheJobWithStopOnWorkerFailure) {
  WriteRole("coordinator", "echo '@endpoint tcp://127.0.0.1:5555'\nhang\n");
  WriteRole("server", "hang\n");
  WriteRole("worker", R"sh(
if [ "$rank" = 1 ]; then
  # Fail once every other role and helper is up (13 pids in all).
  while [ "$(wc -l < "$FAKE_DIR/pids")" -lt 13 ]; do sleep 0.05; done
  echo "2024-01-01T00:00:00.000Z ERROR role=worker rank=1 out of cheese" >&2
  exit 1
fi
hang
)sh");
  LaunchResult r = Launch(LaunchArgs(Job(2, 3), {"--stop-on-worker-failure"}));
  EXPECT_FALSE(r.how.signaled);
  EXPECT_EQ(r.how.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("lockstep-launch: worker 1 (pid "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("exited with status 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("  2024-01-01T00:00:00.000Z ERROR role=worker rank=1 "
                       "out of cheese"),
            std::string::npos)
      << r.err;
  EXPECT_LT(r.seconds, 10.0);
  // Coordinator, 2 servers, 3 workers and the evaluator, plus the helpers
  // of the 6 that hang.
  EXPECT_EQ(RecordedPids().size(), 13u);
  // TearDown checks that none of them survived.
}

TEST_F(LaunchTest, FailingWorkerDoesNotStopTheJobByDefault) {
  // The coordinator ends the job well after worker 1 is gone; everyone else
  // leaves once it has.
  WriteRole("coordinator", R"sh(
echo "@endpoint tcp://127.0.0.1:5555"
while [ ! -e "$FAKE_DIR/worker-1-dying" ]; do sleep 0.05; done
sleep 1
echo '@summary {"policy":"bsp","clocks":10,"wall_s":1.0,"samples_per_s":50.0,"test_accuracy":0.7,"time_to_target_s":null}'
touch "$FAKE_DIR/done"
)sh");
  const std::string wait_for_done =
      "while [ ! -e \"$FAKE_DIR/done\" ]; do sleep 0.05; done\n";
  WriteRole("server", wait_for_done);
  WriteRole("worker", R"sh(
if [ "$rank" = 1 ]; then
  sleep 0.2
  touch "$FAKE_DIR/worker-1-dying"
  kill -KILL $$
fi
)sh" + wait_for_done);
  LaunchResult r = Launch(LaunchArgs(Job(1, 3)));
  ASSERT_TRUE(r.how.ok()) << r.how.ToString() << "\n" << r.out << r.err;
  EXPECT_NE(r.err.find("lockstep-launch: worker 1 (pid "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(") was killed by signal 9"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; the job goes on with the other workers\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warning: 1 of 3 workers failed during the job"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("done: policy bsp  clocks 10"), std::string::npos)
      << r.out;
  EXPECT_NE(ReadFile(run_dir() / "logs" / "worker-1.log")
                .find("# lockstep-launch: worker 1 (pid "),
            std::string::npos);
  EXPECT_LT(r.seconds, 10.0);  // the others left by themselves
}

TEST_F(LaunchTest, JobStopsWhenEveryWorkerHasFailed) {
  WriteRole("coordinator", "echo '@endpoint tcp://127.0.0.1:5555'\nhang\n");
  WriteRole("server", "hang\n");
  // (Not 3: that is a role told the job failed, kExitJobAborted.)
  WriteRole("worker", "sleep 0.2\nexit 5\n");
  LaunchResult r = Launch(LaunchArgs(Job(1, 2)));
  EXPECT_EQ(r.how.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("the job goes on with the other workers"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("every worker has failed"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10.0);
}

TEST_F(LaunchTest, HeteroProfilesReachTheWorkersAndTheConfig) {
  WriteRole("coordinator", kGoodCoordinator);
  WriteRole("server", "");
  WriteRole("worker", "");
  LaunchResult r = Launch(LaunchArgs(
      Job(1, 3), {"--hetero", "*:linear=0.002+0.0004; w2: x4@150,x1@300"}));
  ASSERT_TRUE(r.how.ok()) << r.how.ToString() << "\n" << r.out << r.err;
  const fs::path logs = run_dir() / "logs";
  EXPECT_NE(ReadFile(logs / "worker-0.log")
                .find("--rank 0 --hetero linear=0.002+0.0004\n"),
            std::string::npos);
  EXPECT_NE(ReadFile(logs / "worker-2.log")
                .find("--rank 2 --hetero linear=0.002+0.0004,x4@150,x1@300"),
            std::string::npos);
  EXPECT_EQ(ReadFile(logs / "server-0.log").find("--hetero"),
            std::string::npos);
  const std::string config = ReadFile(run_dir() / "config.json");
  EXPECT_NE(config.find("\"hetero\":{\"0\":\"linear=0.002+0.0004\","
                        "\"1\":\"linear=0.002+0.0004\","
                        "\"2\":\"linear=0.002+0.0004,x4@150,x1@300\"}"),
            std::string::npos)
      << config;
  EXPECT_NE(config.find("\"stop_on_worker_failure\":false"), std::string::npos)
      << config;
}

TEST_F(LaunchTest, BadHeteroExitsTwoBeforeStartingAnything) {
  WriteRole("coordinator", "");
  WriteRole("server", "");
  WriteRole("worker", "");
  JobConfig job;
  job.workers = 2;  // ranks 0 and 1: w2 names no worker
  LaunchResult r = Launch(LaunchArgs(job, {"--hetero", "w2:x4"}));
  EXPECT_EQ(r.how.code, 2);
  EXPECT_EQ(r.err.rfind("lockstep-launch: --hetero: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(run_dir()));
}

TEST_F(LaunchTest, CrashedServerIsReportedWithItsSignal) {
  WriteRole("coordinator", "echo '@endpoint tcp://127.0.0.1:5555'\nhang\n");
  WriteRole("server", "sleep 0.2\nkill -SEGV $$\n");
  WriteRole("worker", "hang\n");
  LaunchResult r = Launch(LaunchArgs(Job(1, 1)));
  EXPECT_EQ(r.how.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("server 0 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was killed by signal 11"), std::string::npos) << r.err;
}

TEST_F(LaunchTest, CoordinatorFailureBeforeTheEndpointIsReported) {
  WriteRole("coordinator", "echo 'cannot bind' >&2\nexit 4\n");
  WriteRole("server", "hang\n");
  WriteRole("worker", "hang\n");
  LaunchResult r = Launch({});
  EXPECT_EQ(r.how.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("coordinator (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exited with status 4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("  cannot bind"), std::string::npos) << r.err;
  EXPECT_EQ(RecordedPids().size(), 1u);  // no server or worker was started
}

TEST_F(LaunchTest, TimeoutStopsEverything) {
  WriteRole("coordinator", "echo '@endpoint tcp://127.0.0.1:5555'\nhang\n");
  WriteRole("server", "trap '' TERM\nhang\n");  // needs the SIGKILL
  WriteRole("worker", "hang\n");
  LaunchResult r = Launch(LaunchArgs(Job(1, 2), {"--timeout-s", "1"}));
  EXPECT_EQ(r.how.code, 124) << r.out << r.err;
  EXPECT_NE(r.err.find("--timeout-s 1"), std::string::npos) << r.err;
  EXPECT_GE(r.seconds, 1.0);
  EXPECT_LT(r.seconds, 10.0);
}

TEST_F(LaunchTest, InterruptStopsEverything) {
  WriteRole("coordinator", "echo '@endpoint tcp://127.0.0.1:5555'\nhang\n");
  WriteRole("server", "hang\n");
  WriteRole("worker", "hang\n");
  // 1 coordinator + 1 server + 2 workers, each with a helper.
  LaunchResult r = Launch(LaunchArgs(Job(1, 2)), milliseconds(30000),
                          /*interrupt_after_pids=*/8);
  EXPECT_EQ(r.how.code, 130) << r.out << r.err;
  EXPECT_NE(r.err.find("interrupted (SIGINT)"), std::string::npos) << r.err;
}

TEST_F(LaunchTest, BadFlagsExitTwoWithOneLine) {
  WriteRole("coordinator", "");
  WriteRole("server", "");
  WriteRole("worker", "");
  LaunchResult r = Launch({"--workers", "0"});
  EXPECT_EQ(r.how.code, 2);
  EXPECT_EQ(r.err.rfind("lockstep-launch: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(run_dir()));
}

}  // namespace
}  // namespace lockstep
