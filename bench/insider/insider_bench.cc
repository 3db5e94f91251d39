// The insider, measured against the job it attacks (issue 40): the
// recovery tests' job (tests/integration/recovery_job.h: 2 servers, 3
// workers, 150 clocks, global data order) runs clean and with a process
// that holds the worker key and worker 1's ticket - a compromised pod, a
// buggy loader - and, a few clocks in, tries on server 0 what that ticket
// allows without an admission of the coordinator's: a push as worker 0, a
// batch of 2^32-1, a clock far ahead, pushes without an admission or with
// a forged one and a verdict of its own, a far pull, an evaluation point's
// pull, a backup's subscription. Under bsp, lbbsp, asp and ssp:2, and
// under bsp with --replicas 1 and server 1 killed after the attempts (its
// backup promoted): every attempt refused and counted by reason, no honest
// worker removed, the final model bit-identical to the clean job's under
// bsp and lbbsp (their models are a function of the job) and its accuracy
// within 0.01 under asp and ssp (whose order of arrival is the machine's;
// two clean runs are compared too, for scale).
//
//   build/bin/lockstep-bench-insider [--gtest_filter=...]
//
// Prints one row per policy; bench/results/insider-*.txt keeps a run's.
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "tests/integration/data_plane_probe.h"
#include "tests/integration/recovery_job.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

struct Outcome {
  std::vector<float> model;
  std::string summary;
  double accuracy = 0;
  double loss = 0;
};

// Sends `header` (with a 4-float payload if `payload`) and expects an
// Error naming `why`.
void ExpectError(DataChannel& channel, zmq::message_t header,
                 const std::string& why, bool payload) {
  std::vector<zmq::message_t> frames;
  frames.push_back(std::move(header));
  if (payload) frames.push_back(ZeroFloats(4));
  std::string text;
  ASSERT_TRUE(SendExpectError(channel, std::move(frames), &text).ok());
  EXPECT_NE(text.find(why), std::string::npos) << text;
}

// Worker 1's stolen ticket on server 0 at `endpoint`: 5 pushes refused
// (impersonation, batch, clock_window - on arrival, where no clock is kept
// waiting, quota - and quota x2) and 2 or 3 requests answered with an
// Error.
void Attack(TestCluster& cluster, const std::string& endpoint,
            bool on_arrival) {
  const SpeakAsWorker insider(cluster, 1);
  auto channel = DataChannel::Connect(endpoint, 10, false, insider.ticket());
  ASSERT_TRUE(channel.ok()) << channel.status().message();
  DataChannel& c = **channel;
  ExpectError(c, PushHeader(0, 0, 4), "connection sent a Push as worker 0",
              true);
  ExpectRefusedPush(c, PushHeader(1, 0, 4, 0xFFFFFFFFu),
                    "above the job's largest");
  ExpectRefusedPush(c, PushHeader(1, 0, 4, 8, int64_t{1} << 40),
                    on_arrival ? "without the coordinator's admission"
                               : "beyond the clocks this shard admits");
  ExpectRefusedPush(c, PushHeader(1, 0, 4, 8, 0),
                    "without the coordinator's admission");
  PushShows forged;
  forged.quota = 1u << 20;
  forged.quota_seal = std::string(kFactSealBytes, 'x');
  forged.verdict = wire::PushVerdict::Apply;
  forged.verdict_seal = std::string(kFactSealBytes, 'y');
  ExpectRefusedPush(c, PushHeader(1, 0, 4, 8, 0, forged),
                    "without the coordinator's admission");
  if (!on_arrival) {
    ExpectError(c, PullHeader(1, 0, 4, int64_t{1} << 40),
                "beyond the clocks this shard admits", false);
  }
  ExpectError(c, PullHeader(1, 0, 4, 0, int64_t{1} << 40),
              "only the evaluator reads an evaluation point", false);
  ExpectError(c, SubscribeAsBackupHeader(),
              "a replica subscription needs a server's ticket", false);
}

// Every attempt counted against worker 1 by reason in /metrics, while the
// job runs (5 s at most).
void ExpectCountedByReason(TestCluster& cluster, bool on_arrival) {
  std::vector<std::string> lines = {
      R"(lockstep_rejected_pushes_total{worker="1",reason="impersonation"} 1)",
      R"(lockstep_rejected_pushes_total{worker="1",reason="batch"} 1)"};
  if (on_arrival) {
    lines.push_back(
        R"(lockstep_rejected_pushes_total{worker="1",reason="quota"} 3)");
  } else {
    lines.push_back(
        R"(lockstep_rejected_pushes_total{worker="1",reason="clock_window"} 1)");
    lines.push_back(
        R"(lockstep_rejected_pushes_total{worker="1",reason="quota"} 2)");
  }
  std::string text;
  for (int i = 0; i < 100; ++i) {
    text = cluster.CoordinatorMetrics();
    bool all = true;
    for (const std::string& line : lines) {
      all = all && text.find(line) != std::string::npos;
    }
    if (all) return;
    cluster.Pump(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "not every attempt is counted by reason:\n" << text;
}

// Runs the job under `sync` (`uneven` workers as StartRoles), attacked or
// not, with server 1 killed after the attempts when `kill_a_primary`
// (then with --replicas 1).
Outcome RunJob(const std::string& sync, bool uneven, bool attack,
               bool kill_a_primary = false) {
  const std::string dir = MakeTempDir("lockstep-insider-bench");
  JobConfig job = RecoveryJob(dir);
  job.sync = sync;
  // The insider speaks with worker 1's rank: removing worker 1 for its
  // refusals would end the honest process.
  job.max_refused_pushes = 0;
  if (kill_a_primary) job.replicas = 1;
  TestCluster cluster;
  EXPECT_TRUE(cluster
                  .StartCoordinator(job, {"--run-dir", dir, "--metrics-listen",
                                          "127.0.0.1:0"})
                  .ok());
  StartRoles(cluster, dir, uneven);
  if (attack) {
    const std::string endpoint = AwaitServerEndpoint(cluster, "server 0");
    EXPECT_FALSE(endpoint.empty()) << cluster.Output("server 0");
    EXPECT_TRUE(AwaitClocks(cluster, 5)) << cluster.CoordinatorMetrics();
    const bool on_arrival = sync == "asp" || sync.rfind("ssp", 0) == 0;
    Attack(cluster, endpoint, on_arrival);
    ExpectCountedByReason(cluster, on_arrival);
    if (kill_a_primary) {
      EXPECT_EQ(kill(cluster.Pid("server 1"), SIGKILL), 0);
    }
  }
  auto model = RunToTheEnd(cluster, dir);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  Outcome out;
  if (model.ok()) out.model = std::move(*model);
  out.summary = ReadFile(dir + "/summary.json");
  out.accuracy = JsonNumber(out.summary, "test_accuracy");
  out.loss = JsonNumber(out.summary, "test_loss");
  if (kill_a_primary) {
    const std::string log = cluster.Output("coordinator");
    EXPECT_NE(log.find("promoting shard 1's backup"), std::string::npos) << log;
    EXPECT_EQ(log.find("rolling every shard back"), std::string::npos) << log;
  }
  return out;
}

// Every attempt counted; nobody removed; the job ran to its end.
void ExpectCounted(const Outcome& attacked) {
  const std::string& s = attacked.summary;
  EXPECT_EQ(JsonNumber(s, "rejected_pushes"), 5) << s;
  EXPECT_EQ(JsonNumber(s, "dead_workers"), 0) << s;
  EXPECT_EQ(JsonNumber(s, "poisoning_workers_removed"), 0) << s;
  EXPECT_EQ(JsonNumber(s, "clocks"), kRecoveryClocks) << s;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return !a.empty() && a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void Row(const std::string& policy, const Outcome& clean,
         const Outcome& attacked, const std::string& compared) {
  std::cout << "insider: " << policy << " clean accuracy " << clean.accuracy
            << ", attacked " << attacked.accuracy << " (|diff| "
            << std::fabs(clean.accuracy - attacked.accuracy) << "), test loss "
            << clean.loss << " and " << attacked.loss << "; " << compared
            << "\n";
}

class InsiderBench : public ::testing::TestWithParam<std::string> {};

// bsp and lbbsp: the attacked job's model is the clean one's, bit for bit.
TEST_P(InsiderBench, CommitPoliciesEndWithTheCleanModel) {
  const bool uneven = GetParam() == "lbbsp";
  const Outcome clean = RunJob(GetParam(), uneven, false);
  const Outcome attacked = RunJob(GetParam(), uneven, true);
  ExpectCounted(attacked);
  const bool same = SameBits(attacked.model, clean.model);
  EXPECT_TRUE(same);
  Row(GetParam(), clean, attacked,
      same ? "model bit-identical" : "MODEL DIFFERS");
}

INSTANTIATE_TEST_SUITE_P(Policies, InsiderBench,
                         ::testing::Values("bsp", "lbbsp"));

class InsiderOnArrivalBench : public ::testing::TestWithParam<std::string> {};

// asp and ssp: accuracy within 0.01 of the clean job's.
TEST_P(InsiderOnArrivalBench, AccuracyWithinAHundredthOfTheCleanJobs) {
  const Outcome clean = RunJob(GetParam(), false, false);
  const Outcome again = RunJob(GetParam(), false, false);
  const Outcome attacked = RunJob(GetParam(), false, true);
  ExpectCounted(attacked);
  EXPECT_LE(std::fabs(clean.accuracy - attacked.accuracy), 0.01);
  Row(GetParam(), clean, attacked,
      "two clean runs: accuracy " + std::to_string(again.accuracy) +
          ", test loss " + std::to_string(again.loss));
}

INSTANTIATE_TEST_SUITE_P(Policies, InsiderOnArrivalBench,
                         ::testing::Values("asp", "ssp:2"));

// A primary killed after the attempts: its backup is promoted with no
// rollback and the job ends with the clean job's model.
TEST(InsiderReplicaBench, APromotionAfterTheAttemptsKeepsTheCleanModel) {
  const Outcome clean = RunJob("bsp", false, false);
  const Outcome attacked = RunJob("bsp", false, true, /*kill_a_primary=*/true);
  ExpectCounted(attacked);
  const bool same = SameBits(attacked.model, clean.model);
  EXPECT_TRUE(same);
  Row("bsp --replicas 1, server 1 killed", clean, attacked,
      same ? "model bit-identical" : "MODEL DIFFERS");
}

}  // namespace
}  // namespace lockstep
