// A cluster engine terminating a job (SIGTERM, as Slurm's preemption and
// requeue and Kubernetes' pod deletion send it), with real processes: the
// whole job gets SIGTERM at once and ends resumable (every role exits 75)
// with a snapshot round of its newest commit, which the restarted job
// (--resume-if-present) continues from; one server terminated alone
// preempts the job the same way; one worker terminated alone (exit 75, so
// an engine replaces it) leaves a job
// that goes on without it.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

#include "common/termination.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

using std::chrono::seconds;

constexpr int kServers = 2;

JobConfig PreemptedJob(const std::string& dir, int workers) {
  JobConfig job;
  job.servers = kServers;
  job.workers = workers;
  job.model = "softmax";
  job.data = "synthetic:samples=2000:test=400:dim=12:classes=3";
  job.max_clocks = 3000;
  job.eval_every = 0;
  job.evaluators = 0;
  job.heartbeat_ms = 100;
  job.snapshot_dir = dir + "/s";
  return job;
}

// Starts the job's roles (`extra`: the coordinator's own flags) and waits
// until training committed a few clocks.
void StartJob(TestCluster& cluster, const JobConfig& job,
              const std::string& dir, std::vector<std::string> extra = {}) {
  extra.insert(extra.end(), {"--run-dir", dir});
  ASSERT_TRUE(cluster.StartCoordinator(job, extra).ok());
  for (uint32_t s = 0; s < job.servers; ++s) {
    ASSERT_TRUE(cluster.StartServer(static_cast<int>(s)).ok());
  }
  for (uint32_t w = 0; w < job.workers; ++w) {
    ASSERT_TRUE(
        cluster.StartWorker(w, {"--hetero", "linear=0.004+0.00001"}).ok());
  }
}

// SIGTERM to worker 1 alone; its exit.
ExitInfo TerminateWorker1(TestCluster& cluster) {
  EXPECT_EQ(kill(cluster.Pid("worker 1"), SIGTERM), 0);
  auto left = cluster.WaitFor("worker 1", seconds(30));
  EXPECT_TRUE(left.ok());
  return left.ok() ? *left : ExitInfo{};
}

void AwaitClocks(TestCluster& cluster, const std::string& dir, size_t lines) {
  for (int i = 0; i < 400 && ReadLines(dir + "/metrics.jsonl").size() < lines;
       ++i) {
    cluster.Pump(std::chrono::milliseconds(50));
  }
  ASSERT_GE(ReadLines(dir + "/metrics.jsonl").size(), lines)
      << cluster.Output("coordinator");
}

// The newest clock a worker reported so far.
int64_t NewestReportedClock(const std::string& dir) {
  int64_t newest = -1;
  for (const std::string& line : ReadLines(dir + "/metrics.jsonl")) {
    newest = std::max(newest, static_cast<int64_t>(JsonNumber(line, "clock")));
  }
  return newest;
}

std::vector<std::string> RoleNames(int workers) {
  std::vector<std::string> names = {"coordinator"};
  for (int s = 0; s < kServers; ++s)
    names.push_back("server " + std::to_string(s));
  for (int w = 0; w < workers; ++w)
    names.push_back("worker " + std::to_string(w));
  return names;
}

void ExpectEveryRolePreempted(TestCluster& cluster, int workers) {
  ASSERT_TRUE(cluster.WaitAll(seconds(40)));
  for (const std::string& name : RoleNames(workers)) {
    const ExitInfo& exit = cluster.ExitOf(name);
    EXPECT_FALSE(exit.signaled) << name << "\n" << cluster.Output(name);
    EXPECT_EQ(exit.code, kExitPreempted) << name << "\n"
                                         << cluster.Output(name);
  }
}

TEST(PreemptionTest, SigtermToEveryRoleEndsResumableAtTheNewestCommit) {
  const std::string dir = MakeTempDir("lockstep-preempt");
  const JobConfig job = PreemptedJob(dir, 2);
  int64_t reported = -1;
  {
    TestCluster cluster;
    StartJob(cluster, job, dir, {"--resume-if-present"});
    AwaitClocks(cluster, dir, 40);
    // As slurmd does: every task of the job at once.
    for (pid_t pid : cluster.group().running_pids()) kill(pid, SIGTERM);
    reported = NewestReportedClock(dir);
    ExpectEveryRolePreempted(cluster, 2);
    EXPECT_TRUE(cluster.Printed("coordinator", "is durable; the job resumes"))
        << cluster.Output("coordinator");
  }
  auto manifest = SnapshotManifest::Load(job.snapshot_dir);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  const ManifestRound* round = manifest->LatestComplete();
  ASSERT_NE(round, nullptr);
  // The round holds every clock committed when the signal came: no older
  // periodic round (this job has none) to fall back to.
  EXPECT_GE(round->clock + 1, reported);

  // Restarted as a requeued job is: the same command line.
  const size_t before = ReadLines(dir + "/metrics.jsonl").size();
  TestCluster again;
  StartJob(again, job, dir, {"--resume-if-present"});
  auto done = again.WaitFor("coordinator", seconds(120));
  ASSERT_TRUE(done.ok() && done->ok()) << again.Output("coordinator");
  EXPECT_TRUE(again.Printed("coordinator", "resuming from " + job.snapshot_dir))
      << again.Output("coordinator");
  EXPECT_TRUE(again.WaitAll(seconds(30)));
  // The resumed run appends to the same records, from the round's clock on.
  const std::vector<std::string> lines = ReadLines(dir + "/metrics.jsonl");
  ASSERT_GT(lines.size(), before);
  EXPECT_EQ(static_cast<int64_t>(JsonNumber(lines[before], "clock")),
            round->clock + 1)
      << lines[before];
}

TEST(PreemptionTest, ATerminatedServerPreemptsTheWholeJob) {
  const std::string dir = MakeTempDir("lockstep-preempt-server");
  const JobConfig job = PreemptedJob(dir, 2);
  TestCluster cluster;
  StartJob(cluster, job, dir);
  AwaitClocks(cluster, dir, 20);
  ASSERT_EQ(kill(cluster.Pid("server 1"), SIGTERM), 0);
  ExpectEveryRolePreempted(cluster, 2);
  EXPECT_TRUE(cluster.Printed("coordinator", "server 1 is being terminated"))
      << cluster.Output("coordinator");
  auto manifest = SnapshotManifest::Load(job.snapshot_dir);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_NE(manifest->LatestComplete(), nullptr);
}

TEST(PreemptionTest, ATerminatedWorkerLeavesAndTheJobGoesOn) {
  const std::string dir = MakeTempDir("lockstep-preempt-worker");
  JobConfig job = PreemptedJob(dir, 3);
  job.max_clocks = 600;
  TestCluster cluster;
  StartJob(cluster, job, dir);
  AwaitClocks(cluster, dir, 30);
  const ExitInfo left = TerminateWorker1(cluster);
  // Not a success: an engine replaces it (an Indexed Job's index is not
  // done), and the replacement rejoins at the current clock.
  EXPECT_EQ(left.code, kExitPreempted)
      << left.ToString() << cluster.Output("worker 1");
  EXPECT_TRUE(cluster.Printed("worker 1", "left the job"))
      << cluster.Output("worker 1");
  auto done = cluster.WaitFor("coordinator", seconds(120));
  ASSERT_TRUE(done.ok() && done->ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator", "2 workers go on"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(seconds(30)));
  for (int w : {0, 2}) {
    EXPECT_TRUE(cluster.ExitOf("worker " + std::to_string(w)).ok());
  }
}

// What an Indexed Job (or a TFJob's ExitCode policy) does with a pod that
// exited with the preempted code: a new process of the same rank. It
// rejoins the running job at the current clock and trains to the end.
TEST(PreemptionTest, ATerminatedWorkersReplacementRejoinsAtTheCurrentClock) {
  const std::string dir = MakeTempDir("lockstep-preempt-replace");
  JobConfig job = PreemptedJob(dir, 3);
  job.max_clocks = 600;
  TestCluster cluster;
  StartJob(cluster, job, dir);
  AwaitClocks(cluster, dir, 30);
  ASSERT_EQ(TerminateWorker1(cluster).code, kExitPreempted)
      << cluster.Output("worker 1");
  ASSERT_TRUE(
      cluster.StartWorker(1, {"--hetero", "linear=0.004+0.00001"}).ok());
  auto done = cluster.WaitFor("coordinator", seconds(120));
  ASSERT_TRUE(done.ok() && done->ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator", "worker 1 on "))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator", "joined the running job"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(seconds(30)));
  EXPECT_TRUE(cluster.ExitOf("worker 1").ok()) << cluster.Output("worker 1");
  // The replacement trained: clocks of worker 1 after its predecessor left.
  int64_t last_of_worker_1 = -1;
  for (const std::string& line : ReadLines(dir + "/metrics.jsonl")) {
    if (JsonNumber(line, "worker") == 1) {
      last_of_worker_1 = std::max<int64_t>(
          last_of_worker_1, static_cast<int64_t>(JsonNumber(line, "clock")));
    }
  }
  EXPECT_GE(last_of_worker_1, job.max_clocks - 10);
}

}  // namespace
}  // namespace lockstep
