// Workers added to and removed from a running job as an engine does it:
// a job of 4 workers (--max-workers 6) gets 2 more processes mid-job (they
// join at the current clock) and then loses 3 to SIGTERM (a scale-down:
// they leave cleanly and exit 0), under BSP (each worker its batch) and
// LB-BSP (the global batch re-split among whoever is there). The job
// finishes, and each clock's reports show who trained it with which quota.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <set>

#include "common/termination.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

using std::chrono::seconds;

// Per committed clock: each reporting worker's batch.
using ClockQuotas = std::map<int64_t, std::map<int, int>>;

ClockQuotas QuotasByClock(const std::string& dir) {
  ClockQuotas quotas;
  for (const std::string& line : ReadLines(dir + "/metrics.jsonl")) {
    const auto clock = static_cast<int64_t>(JsonNumber(line, "clock"));
    quotas[clock][static_cast<int>(JsonNumber(line, "worker"))] =
        static_cast<int>(JsonNumber(line, "batch"));
  }
  return quotas;
}

// Waits until worker `rank` has reported `clocks` clocks.
void AwaitReports(TestCluster& cluster, const std::string& dir, int rank,
                  size_t clocks) {
  for (int i = 0; i < 600; ++i) {
    size_t seen = 0;
    for (const auto& [clock, by_worker] : QuotasByClock(dir)) {
      seen += by_worker.count(rank);
    }
    if (seen >= clocks) return;
    cluster.Pump(std::chrono::milliseconds(50));
  }
  FAIL() << "worker " << rank << " did not report " << clocks << " clocks\n"
         << cluster.Output("coordinator");
}

class ElasticWorkersTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ElasticWorkersTest, FourThenSixThenThreeWorkersFinishTheJob) {
  const std::string sync = GetParam();
  const std::string dir = MakeTempDir("lockstep-elastic-" + sync);
  JobConfig job;
  job.servers = 2;
  job.workers = 4;
  job.max_workers = 6;
  job.sync = sync;
  job.data_order = "global";
  job.model = "softmax";
  job.data = "synthetic:samples=6000:test=600:dim=12:classes=3";
  job.max_clocks = 900;
  job.eval_every = 0;
  job.evaluators = 0;
  job.heartbeat_ms = 100;
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(job, {"--run-dir", dir}).ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  // Uneven speeds, so LB-BSP's quotas differ by worker.
  const auto start_worker = [&](int rank) {
    const std::string per_sample = std::to_string(0.00002 * (1 + rank % 3));
    ASSERT_TRUE(
        cluster.StartWorker(rank, {"--hetero", "linear=0.002+" + per_sample})
            .ok());
  };
  for (int w = 0; w < 4; ++w) start_worker(w);
  AwaitReports(cluster, dir, 0, 100);
  start_worker(4);  // scaled up: 4 -> 6
  start_worker(5);
  AwaitReports(cluster, dir, 5, 100);
  for (int w : {5, 4, 3}) {  // scaled down: 6 -> 3
    ASSERT_EQ(kill(cluster.Pid("worker " + std::to_string(w)), SIGTERM), 0);
  }
  for (int w : {5, 4, 3}) {
    const std::string name = "worker " + std::to_string(w);
    auto left = cluster.WaitFor(name, seconds(60));
    ASSERT_TRUE(left.ok()) << name;
    // Let go while the job goes on: the preempted code (a scaled-down
    // pod's exit counts for nothing; an evicted one's is replaced).
    EXPECT_EQ(left->code, kExitPreempted)
        << left->ToString() << cluster.Output(name);
  }
  auto done = cluster.WaitFor("coordinator", seconds(180));
  ASSERT_TRUE(done.ok() && done->ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(seconds(30)));

  // Clocks trained by 4, by 6 and by 3 workers, in that order.
  const ClockQuotas quotas = QuotasByClock(dir);
  ASSERT_EQ(quotas.rbegin()->first, job.max_clocks - 1);
  std::vector<size_t> phases;  // worker counts as they changed
  int short_clocks = 0;
  for (const auto& [clock, by_worker] : quotas) {
    const bool changed = phases.empty() || phases.back() != by_worker.size();
    if (changed) phases.push_back(by_worker.size());
    int sum = 0;
    for (const auto& [worker, batch] : by_worker) sum += batch;
    if (sync == "lbbsp") {
      // One global batch, re-split among whoever trains the clock; the
      // clock the leavers were split into (admitted before they were let
      // go) commits without their slices.
      if (changed && sum < 128) {
        ++short_clocks;
      } else {
        EXPECT_EQ(sum, 128) << "clock " << clock;
      }
    } else {
      EXPECT_EQ(sum, 32 * static_cast<int>(by_worker.size()))
          << "clock " << clock;
    }
  }
  EXPECT_LE(short_clocks, 1);
  ASSERT_GE(phases.size(), 3u);
  EXPECT_EQ(phases.front(), 4u);
  EXPECT_NE(std::find(phases.begin(), phases.end(), 6u), phases.end());
  EXPECT_EQ(phases.back(), 3u);
  const std::set<int> last = [&] {
    std::set<int> w;
    for (const auto& [worker, batch] : quotas.rbegin()->second)
      w.insert(worker);
    return w;
  }();
  EXPECT_EQ(last, (std::set<int>{0, 1, 2}));
}

INSTANTIATE_TEST_SUITE_P(Policies, ElasticWorkersTest,
                         ::testing::Values("bsp", "lbbsp"));

}  // namespace
}  // namespace lockstep
