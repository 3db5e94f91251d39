// Test support: runs Lockstep's real binaries as child processes on
// 127.0.0.1 and collects their output. Every process started here is killed
// and reaped when the TestCluster is destroyed.
// Thread-safety: not thread-safe; one per test.
#ifndef LOCKSTEP_TESTS_INTEGRATION_TEST_CLUSTER_H_
#define LOCKSTEP_TESTS_INTEGRATION_TEST_CLUSTER_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"
#include "tests/support/launch_args.h"
#include "tools/launch/process_group.h"

namespace lockstep {

// Path of a binary in the build tree, e.g. BinaryPath("lockstep-worker").
std::string BinaryPath(const std::string& name);
// A fresh empty directory under the system temp folder.
std::string MakeTempDir(const std::string& prefix);
std::string ReadFile(const std::string& path);
std::vector<std::string> ReadLines(const std::string& path);
// The number after "key": in a one-line JSON object; NaN if absent/null.
double JsonNumber(const std::string& json, const std::string& key);
// A fresh folder holding a job's keys (common/security/job_keys.h).
std::string MakeJobKeys();
// lockstep-launch's command line for `job`: the binary, then
// LaunchArgs(job, extra).
std::vector<std::string> LaunchCommand(const JobConfig& job,
                                       std::vector<std::string> extra = {});

// lockstep-launch with `flags` (and --timeout-s 120) run to its end: its
// exit and everything it printed.
struct LauncherRun {
  ExitInfo exit;
  std::string output;
};
LauncherRun RunLauncher(const std::vector<std::string>& flags);

class TestCluster;
// The pid of the newest "started ROLE (pid N)" line that the process named
// "launch" (lockstep-launch -v) printed; 0 when there is none.
pid_t StartedPid(TestCluster& cluster, const std::string& role);
// The pid of a process `cluster` started that runs `binary` (its command
// line holds the name); 0 when none runs.
pid_t RunningPidOf(TestCluster& cluster, const std::string& binary);

class TestCluster {
 public:
  TestCluster() = default;
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  // Starts the coordinator of `job` (LaunchArgs(job, extra); `extra` holds
  // the coordinator's own flags, such as --run-dir or --resume) on a free
  // port and waits for its endpoint; then, as lockstep-launch does, the
  // job's evaluator (StartEvaluator) unless `start_evaluator` is false (a
  // test that starts its own) or job.evaluators is 0. With --run-dir DIR
  // in `extra` the evaluator writes the final model to DIR/model.bin
  // (--dump-model).
  Status StartCoordinator(const JobConfig& job,
                          const std::vector<std::string>& extra = {},
                          bool start_evaluator = true);
  // The same with the coordinator's flags as they are (a resume that names
  // only what it changes); `evaluator`: start the job's evaluator.
  Status StartCoordinatorWithFlags(const std::vector<std::string>& flags,
                                   bool evaluator);
  // Starts the job's evaluator, lockstep-worker --evaluator (or `program`,
  // e.g. a Python worker script, with --coordinator and --evaluator), as
  // process "evaluator".
  Status StartEvaluator(const std::vector<std::string>& extra = {},
                        const std::vector<std::string>& program = {});
  // Starts a server or worker connected to the coordinator.
  Status StartServer(int rank, const std::vector<std::string>& extra = {});
  Status StartWorker(int rank, const std::vector<std::string>& extra = {});
  // Starts any binary under `name` (for launcher tests); a role binary, or
  // a program given --coordinator, gets the cluster's keys as StartServer's
  // do.
  StatusOr<pid_t> Start(const std::vector<std::string>& argv,
                        const std::string& name);

  // Runs until the process `name` exited or `timeout` passed; returns its
  // exit, or DeadlineExceeded.
  StatusOr<ExitInfo> WaitFor(const std::string& name,
                             std::chrono::seconds timeout);
  // Waits until every child exited (or timeout); true if all did.
  bool WaitAll(std::chrono::seconds timeout);
  // Polls output once for up to `timeout`.
  void Pump(std::chrono::milliseconds timeout);

  const std::string& endpoint() const { return endpoint_; }
  // This cluster's job keys (made on first use; every role started here
  // gets --keys with it unless its flags name --keys or --security).
  const std::string& keys_dir();
  // All lines a process printed so far (stdout and stderr).
  const std::vector<std::string>& Lines(const std::string& name) {
    return lines_[name];
  }
  // Joined output of `name`, for failure messages.
  std::string Output(const std::string& name);
  // Whether `name` printed a line containing `text` so far.
  bool Printed(const std::string& name, const std::string& text);
  // Pumps until `name` printed a line containing `text`, at most `timeout`.
  bool AwaitPrinted(const std::string& name, const std::string& text,
                    std::chrono::milliseconds timeout);
  // The coordinator's /metrics, once it printed where they are ("" before,
  // or when nothing answers).
  std::string CoordinatorMetrics();
  bool Exited(const std::string& name) const { return exits_.count(name); }
  const ExitInfo& ExitOf(const std::string& name) { return exits_[name]; }
  ProcessGroup& group() { return group_; }
  // The pid of the newest process started as `name`; 0 when none was.
  pid_t Pid(const std::string& name) const {
    auto it = pids_.find(name);
    return it == pids_.end() ? 0 : it->second;
  }

 private:
  void Absorb(ChildEvents&& events);
  StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                        const std::string& name);

  // `argv` with --keys keys_dir() unless it says --keys or --security.
  std::vector<std::string> WithKeys(std::vector<std::string> argv);

  ProcessGroup group_;
  std::string keys_dir_;
  std::string endpoint_;
  std::map<std::string, std::vector<std::string>> lines_;
  std::map<std::string, ExitInfo> exits_;
  std::map<std::string, pid_t> pids_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_INTEGRATION_TEST_CLUSTER_H_
