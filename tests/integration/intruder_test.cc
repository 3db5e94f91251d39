// An intruder without the job's keys against a live job (security on, as
// every launch path runs it), from another network namespace: the job's
// roles run in one namespace, the intruder in a second one joined to it by
// a veth pair, as a host on the same network would be. It tries to
// register, to push (NaN too) and pull on a server's data port, to replay a
// handshake proof recorded from the wire, to ask for a snapshot round and a
// shutdown with another job's admin key, to scrape the metrics, and to hold
// 2,000 idle connections. Every attempt is refused and counted; the job
// trains to its accuracy, every clock committed. Needs root (namespaces).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <regex>
#include <vector>

#include "common/security/job_keys.h"
#include "common/transport/stream/handshake.h"
#include "common/wire/message.h"
#include "tests/integration/intruder_attacks.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/namespace_pair.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

constexpr int kIntruderClocks = 600;

JobConfig IntruderJob() {
  JobConfig job;
  job.servers = 2;
  job.workers = 2;
  job.evaluators = 0;
  job.model = "mlp:32";
  job.data = "fashion-mnist";
  job.train_limit = 6000;
  job.test_limit = 1000;
  job.batches = {32};
  job.optimizer = "momentum";
  job.lr = 0.05;
  job.max_clocks = kIntruderClocks;
  job.eval_every = 0;
  return job;
}

// The first match of `pattern` (its group 1) in what `name` printed,
// waiting up to 30 s.
std::string IntruderAwait(TestCluster& cluster, const std::string& name,
                          const std::regex& pattern) {
  for (int i = 0; i < 300; ++i) {
    for (const auto& line : cluster.Lines(name)) {
      std::smatch m;
      if (std::regex_search(line, m, pattern)) return m[1];
    }
    cluster.Pump(std::chrono::milliseconds(100));
  }
  return "";
}

std::string IntruderServerEndpoint(TestCluster& cluster, int rank) {
  const std::regex on(" on (tcp://[0-9.]+:[0-9]+) ");
  for (int i = 0; i < 300; ++i) {
    for (const auto& line : cluster.Lines("server " + std::to_string(rank))) {
      std::smatch m;
      if (std::regex_search(line, m, on)) return m[1];
    }
    cluster.Pump(std::chrono::milliseconds(100));
  }
  return "";
}

// Runs IntruderAttacks in a child moved into the intruder's namespace;
// what it found wrong, one line each.
std::string AttackFromOutside(const NamespacePair& network,
                              const IntruderTargets& targets) {
  int out[2];
  if (pipe(out) != 0) return "no pipe";
  const pid_t child = fork();
  if (child == 0) {
    close(out[0]);
    std::string report;
    if (!network.EnterOutside()) {
      report = "cannot enter the intruder's namespace\n";
    } else {
      for (const std::string& line : IntruderAttacks(targets)) {
        report += line + "\n";
      }
    }
    (void)!write(out[1], report.data(), report.size());
    _exit(0);
  }
  close(out[1]);
  std::string report;
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof(buf))) > 0) report.append(buf, n);
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status)) report += "the intruder died\n";
  return report;
}

TEST(IntruderTest, EveryAttemptWithoutTheKeyIsRefusedAndTheJobTrains) {
  ASSERT_EQ(geteuid(), 0u) << "network namespaces need root";
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  ASSERT_GT(files.rlim_cur, rlim_t{kIdleConnections + 200});
  const NamespacePair network;
  ASSERT_TRUE(network.ok()) << "cannot make the test's network namespaces";
  TempDir tmp("lockstep-intruder");
  const std::string run_dir = tmp.path() + "/run";
  const std::string token = tmp.path() + "/token";
  std::ofstream(token) << "s3cret-metrics-token\n";
  chmod(token.c_str(), 0600);
  TestCluster cluster;
  // Every role in the job's namespace, listening on its veth address.
  const std::vector<std::string> in_job = {"ip", "netns", "exec",
                                           network.job()};
  const std::string& host = network.job_address();
  std::vector<std::string> argv = in_job;
  argv.insert(argv.end(),
              {BinaryPath("lockstep-coordinator"), "--listen",
               "tcp://" + host + ":0", "--metrics-listen", host + ":0",
               "--metrics-token-file", token, "--run-dir", run_dir});
  for (std::string& flag : LaunchArgs(IntruderJob())) argv.push_back(flag);
  ASSERT_TRUE(cluster.Start(argv, "coordinator").ok());
  const std::string control =
      IntruderAwait(cluster, "coordinator", std::regex("^@endpoint (.*)$"));
  ASSERT_FALSE(control.empty()) << cluster.Output("coordinator");
  for (int s = 0; s < 2; ++s) {
    argv = in_job;
    argv.insert(argv.end(), {BinaryPath("lockstep-server"), "--coordinator",
                             control, "--listen", "tcp://" + host + ":0",
                             "--rank", std::to_string(s)});
    ASSERT_TRUE(cluster.Start(argv, "server " + std::to_string(s)).ok());
  }
  // A floor under each clock keeps the job running through the attack.
  for (int w = 0; w < 2; ++w) {
    argv = in_job;
    argv.insert(argv.end(), {BinaryPath("lockstep-worker"), "--coordinator",
                             control, "--rank", std::to_string(w), "--hetero",
                             "linear=0.02+0.0003"});
    ASSERT_TRUE(cluster.Start(argv, "worker " + std::to_string(w)).ok());
  }
  IntruderTargets targets;
  targets.control = control;
  targets.data = IntruderServerEndpoint(cluster, 0);
  ASSERT_FALSE(targets.data.empty())
      << cluster.Output("server 0") << cluster.Output("coordinator")
      << cluster.Output("worker 0");
  targets.metrics =
      IntruderAwait(cluster, "coordinator", std::regex("^@metrics (.*)$"));
  ASSERT_FALSE(targets.metrics.empty());
  const RoleKeys worker = *LoadRoleKeys(cluster.keys_dir() + "/worker.key");
  targets.coordinator_public = worker.public_key(KeyRole::kCoordinator);
  targets.recorded_proof =
      RecordedProof(*LoadRoleKeys(cluster.keys_dir() + "/server.key"));
  ASSERT_EQ(targets.recorded_proof.size(), kClientProofBytes);
  TempDir other_dir("lockstep-other-job");
  ASSERT_TRUE(WriteJobKeys(other_dir.path(), DataSecurity::kAuth).ok());
  targets.other_keys = other_dir.path();

  EXPECT_EQ(AttackFromOutside(network, targets), "");

  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(240));
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(20)));
  const std::string summary = ReadFile(run_dir + "/summary.json");
  EXPECT_EQ(JsonNumber(summary, "clocks"), kIntruderClocks) << summary;
  EXPECT_GT(JsonNumber(summary, "test_accuracy"), 0.72) << summary;
  EXPECT_EQ(JsonNumber(summary, "rejected_pushes"), 0) << summary;
  // Another job's worker and admin keys, refused by the ZAP handler.
  EXPECT_GE(JsonNumber(summary, "refused_connections"), 3) << summary;
  EXPECT_EQ(JsonNumber(summary, "dead_workers"), 0) << summary;
  // Server 0 refused the NaN push's and the replay's connections and
  // closed the idle ones.
  const std::regex refused(
      "refused ([0-9]+) connections without the job's "
      "key, closed ([0-9]+) that did not authenticate");
  std::smatch m;
  const std::string out = cluster.Output("server 0");
  ASSERT_TRUE(std::regex_search(out, m, refused)) << out;
  EXPECT_GE(std::stoi(m[1]), 2) << out;
  EXPECT_GE(std::stoi(m[2]), kIdleConnections / 2 * 9 / 10) << out;
  std::cout << "intruder: " << m[1] << " data connections refused, " << m[2]
            << " closed unauthenticated; control plane: "
            << JsonNumber(summary, "refused_connections")
            << " refused; test accuracy "
            << JsonNumber(summary, "test_accuracy") << "\n";
}

}  // namespace
}  // namespace lockstep
