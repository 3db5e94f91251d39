// Python workers (the lockstep module, PyTorch) in real jobs: the MLP
// trained by Python workers, by C++ workers and by two of each is the same
// model after 50 BSP clocks; a SIGKILLed Python worker is removed and
// rejoins; an exception in a Python worker's model reaches the launcher's
// report with its traceback.
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <cstdlib>

#include "tests/integration/recovery_job.h"
#include "tests/integration/test_cluster.h"
#include "worker/models/model_registry.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

constexpr char kPython[] = "/usr/bin/python3";

std::string Script(const std::string& name) {
  return std::string(LOCKSTEP_SOURCE_DIR) + "/tests/python/" + name;
}

// The lockstep package of this build, for every Python process started.
class PythonWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("PYTHONPATH", LOCKSTEP_PYTHON_DIR, 1);
    setenv("PYTHONUNBUFFERED", "1", 1);
  }
};

// Starts worker `rank` as a Python MLP worker (named `name`, default
// "worker R"); its pid.
StatusOr<pid_t> StartPythonWorker(TestCluster& cluster, int rank,
                                  const std::vector<std::string>& extra,
                                  std::string name = "") {
  std::vector<std::string> argv = {kPython,         Script("mlp_worker.py"),
                                   "--coordinator", cluster.endpoint(),
                                   "--rank",        std::to_string(rank)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (name.empty()) name = "worker " + std::to_string(rank);
  return cluster.Start(argv, name);
}

// 50 BSP clocks of the MLP by 4 workers, `python[w]` saying which are
// Python; the final model.
std::vector<float> TrainMlp(const std::vector<bool>& python) {
  const std::string dir = MakeTempDir("lockstep-python-equiv");
  const std::string model_file = dir + "/model.bin";
  TestCluster cluster;
  JobConfig job;
  job.servers = 2;
  job.workers = static_cast<uint32_t>(python.size());
  job.model = "mlp:32";
  job.batches = {16};
  job.optimizer = "momentum";
  job.lr = 0.05;
  job.max_clocks = 50;
  job.train_limit = 3000;
  job.test_limit = 500;
  job.eval_every = 0;
  job.seed = 7;
  Status started = cluster.StartCoordinator(job, {"--run-dir", dir},
                                            /*start_evaluator=*/false);
  EXPECT_TRUE(started.ok()) << started.ToString();
  // The evaluator runs worker 0's program, as lockstep-launch does.
  const std::vector<std::string> program =
      python[0] ? std::vector<std::string>{kPython, Script("mlp_worker.py")}
                : std::vector<std::string>{};
  EXPECT_TRUE(
      cluster.StartEvaluator({"--dump-model", model_file}, program).ok());
  for (int s = 0; s < 2; ++s) EXPECT_TRUE(cluster.StartServer(s).ok());
  for (size_t w = 0; w < python.size(); ++w) {
    const int rank = static_cast<int>(w);
    EXPECT_TRUE(python[w] ? StartPythonWorker(cluster, rank, {}).ok()
                          : cluster.StartWorker(rank).ok());
  }
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(180));
  EXPECT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(30)));
  for (size_t w = 0; w < python.size(); ++w) {
    const std::string name = "worker " + std::to_string(w);
    EXPECT_TRUE(cluster.Exited(name) && cluster.ExitOf(name).ok())
        << cluster.Output(name);
  }
  auto params = ReadModelFile(model_file);
  EXPECT_TRUE(params.ok()) << params.status().ToString()
                           << cluster.Output("evaluator");
  return params.ok() ? *params : std::vector<float>();
}

// Element by element within 1e-5 (relative above 1); the largest gap.
double ExpectSameModel(const std::vector<float>& got,
                       const std::vector<float>& want, const char* what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  double worst = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    const double tolerance = std::max<double>(1.0, std::fabs(want[i])) * 1e-5;
    worst = std::max(worst, err);
    if (err > tolerance) {
      ADD_FAILURE() << what << ": parameter " << i << " is " << got[i]
                    << ", the C++ workers' " << want[i];
      break;
    }
  }
  return worst;
}

TEST_F(PythonWorkerTest, PythonCppAndMixedWorkersTrainTheSameModel) {
  const std::vector<float> cpp = TrainMlp({false, false, false, false});
  const std::vector<float> py = TrainMlp({true, true, true, true});
  const std::vector<float> mixed = TrainMlp({true, true, false, false});
  ASSERT_EQ(cpp.size(), 784u * 32 + 32 + 32 * 10 + 10);
  // The model trained: equality is not three untouched models.
  auto model = CreateModel("mlp:32", DataShape{false, 784, 10, 3000, 500});
  ASSERT_TRUE(model.ok());
  std::vector<float> initial(cpp.size());
  InitDenseParams((*model)->shape(), 7, initial);
  double moved = 0;
  for (size_t i = 0; i < cpp.size(); ++i) {
    moved = std::max<double>(moved, std::fabs(cpp[i] - initial[i]));
  }
  EXPECT_GT(moved, 1e-2);
  std::cout << "worst |python - c++| " << ExpectSameModel(py, cpp, "python")
            << ", |mixed - c++| " << ExpectSameModel(mixed, cpp, "mixed")
            << " over " << cpp.size() << " parameters\n";
}

TEST_F(PythonWorkerTest, AKilledPythonWorkerIsRemovedAndRejoins) {
  const std::string dir = MakeTempDir("lockstep-python-rejoin");
  TestCluster cluster;
  JobConfig job;
  job.servers = 1;
  job.workers = 2;
  job.model = "softmax";
  job.batches = {16};
  job.max_clocks = 800;
  job.train_limit = 2000;
  job.test_limit = 500;
  job.eval_every = 0;
  // Short, so the killed worker is removed soon.
  job.heartbeat_ms = 100;
  ASSERT_TRUE(cluster.StartCoordinator(job, {"--run-dir", dir}).ok());
  ASSERT_TRUE(cluster.StartServer(0).ok());
  const std::vector<std::string> slow = {"--hetero", "linear=0.01+0.0001"};
  ASSERT_TRUE(StartPythonWorker(cluster, 0, slow).ok());
  auto victim = StartPythonWorker(cluster, 1, slow);
  ASSERT_TRUE(victim.ok());
  // 20 clocks of both workers in metrics.jsonl (flushed about every second).
  for (int i = 0; i < 600 && ReadLines(dir + "/metrics.jsonl").size() < 40 &&
                  !cluster.Exited("worker 1");
       ++i) {
    cluster.Pump(std::chrono::milliseconds(100));
  }
  ASSERT_GE(ReadLines(dir + "/metrics.jsonl").size(), 40u)
      << cluster.Output("worker 1");
  ASSERT_EQ(kill(*victim, SIGKILL), 0);
  ASSERT_TRUE(cluster.WaitFor("worker 1", std::chrono::seconds(10)).ok());
  for (int i = 0;
       i < 100 && !cluster.Printed("coordinator", "worker 1 removed"); ++i) {
    cluster.Pump(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(cluster.Printed("coordinator", "worker 1 removed"))
      << cluster.Output("coordinator");
  ASSERT_TRUE(StartPythonWorker(cluster, 1, slow, "worker 1 again").ok());
  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator", "joined the running job"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(std::chrono::seconds(30)));
  EXPECT_TRUE(cluster.ExitOf("worker 1 again").ok())
      << cluster.Output("worker 1 again");
  EXPECT_TRUE(cluster.ExitOf("worker 0").ok()) << cluster.Output("worker 0");
}

// Starts a supervised job of two Python workers, 300 clocks, in `dir`
// and pumps until a snapshot round is complete.
void StartSupervisedPythonJob(TestCluster& cluster, const std::string& dir) {
  JobConfig job = SupervisedJobConfig();
  job.workers = 2;
  job.max_clocks = 300;
  const std::vector<std::string> argv = SupervisedJob(
      dir, job,
      {"--worker-cmd", "/usr/bin/python3 " + Script("mlp_worker.py")});
  ASSERT_TRUE(cluster.Start(argv, "launch").ok());
  ASSERT_TRUE(PumpUntilARoundCompletes(cluster, dir, 60))
      << cluster.Output("launch");
}

TEST_F(PythonWorkerTest, PythonWorkersFollowARollbackAfterAServerCrash) {
  const std::string dir = MakeTempDir("lockstep-python-rollback") + "/run";
  TestCluster cluster;
  StartSupervisedPythonJob(cluster, dir);
  const std::string log = dir + "/logs/coordinator.log";
  const pid_t server = StartedPid(cluster, "server 1");
  ASSERT_GT(server, 0) << cluster.Output("launch");
  ASSERT_EQ(kill(server, SIGKILL), 0);
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(170));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("launch");
  EXPECT_NE(ReadFile(log).find("recovered in"), std::string::npos)
      << ReadFile(log);
  // Both Python workers went back to the round's clock and finished.
  for (const char* worker : {"/logs/worker-0.log", "/logs/worker-1.log"}) {
    EXPECT_NE(ReadFile(dir + worker)
                  .find("the job was rolled back to a "
                        "snapshot round"),
              std::string::npos)
        << ReadFile(dir + worker);
  }
  EXPECT_EQ(JsonNumber(ReadFile(dir + "/summary.json"), "clocks"), 300);
}

TEST_F(PythonWorkerTest, PythonWorkersOutliveAKilledCoordinator) {
  const std::string dir = MakeTempDir("lockstep-python-coordinator") + "/run";
  TestCluster cluster;
  StartSupervisedPythonJob(cluster, dir);
  const pid_t worker = StartedPid(cluster, "worker 1");
  const pid_t coordinator = StartedPid(cluster, "coordinator");
  ASSERT_GT(worker, 0) << cluster.Output("launch");
  ASSERT_EQ(kill(coordinator, SIGKILL), 0);
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(170));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("launch");
  // The same Python processes registered again and followed the resumed
  // job back to its round.
  EXPECT_EQ(StartedPid(cluster, "worker 1"), worker)
      << cluster.Output("launch");
  for (const char* log : {"/logs/worker-0.log", "/logs/worker-1.log"}) {
    const std::string text = ReadFile(dir + log);
    EXPECT_NE(text.find("re-attached to the coordinator"), std::string::npos)
        << text;
    EXPECT_NE(text.find("the job was rolled back to a snapshot round"),
              std::string::npos)
        << text;
  }
  EXPECT_EQ(JsonNumber(ReadFile(dir + "/summary.json"), "clocks"), 300);
}

TEST_F(PythonWorkerTest, AnExceptionInUserCodeReachesTheLauncherReport) {
  const std::string dir = MakeTempDir("lockstep-python-raise") + "/run";
  TestCluster cluster;
  JobConfig job;
  job.servers = 1;
  job.workers = 2;
  job.model = "softmax";
  job.max_clocks = 100;
  job.train_limit = 1000;
  job.test_limit = 200;
  job.eval_every = 0;
  ASSERT_TRUE(
      cluster
          .Start(LaunchCommand(
                     job, {"--worker-cmd",
                           "w1:/usr/bin/python3 " + Script("failing_worker.py"),
                           "--stop-on-worker-failure", "--run-dir", dir,
                           "--timeout-s", "120"}),
                 "launch")
          .ok());
  auto exit = cluster.WaitFor("launch", std::chrono::seconds(150));
  ASSERT_TRUE(exit.ok());
  EXPECT_FALSE(exit->ok());
  const std::string out = cluster.Output("launch");
  EXPECT_NE(out.find("worker 1"), std::string::npos) << out;
  EXPECT_NE(out.find("ValueError: fragile model gave up on its third batch"),
            std::string::npos)
      << out;
  // Worker 0 was the C++ one.
  EXPECT_NE(ReadFile(dir + "/config.json").find("failing_worker.py"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
