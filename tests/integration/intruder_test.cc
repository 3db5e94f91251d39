// An intruder without the job's keys against a live job (security on, as
// every launch path runs it), from another network namespace: the job's
// roles run in one namespace, the intruder in a second one joined to it by
// a veth pair, as a host on the same network would be. It tries to
// register, to push (NaN too) and pull on a server's data port, to replay a
// handshake proof recorded from the wire, to ask for a snapshot round and a
// shutdown with another job's admin key, to scrape the metrics, and to hold
// 2,000 idle connections. Every attempt is refused and counted; the job
// trains to its accuracy, every clock committed. Needs root (namespaces).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <regex>
#include <thread>
#include <vector>

#include "common/security/job_keys.h"
#include "common/transport/data_channel.h"
#include "common/transport/stream/framing.h"
#include "common/transport/stream/handshake.h"
#include "common/transport/stream/socket.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/curve_dealer.h"
#include "tests/support/http_request.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

constexpr int kIntruderClocks = 600;
constexpr int kIdleConnections = 2000;

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

// A plain TCP connection to `host:port`; -1 when it fails.
int IntruderDial(const std::string& endpoint) {
  std::smatch m;
  if (!std::regex_search(endpoint, m, std::regex("//([0-9.]+):([0-9]+)"))) {
    return -1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(m[2])));
  inet_pton(AF_INET, std::string(m[1]).c_str(), &addr.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 &&
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// True when the peer closed `fd` within `seconds` (what it sent first, a
// greeting, is read and dropped).
bool IntruderClosedWithin(int fd, double seconds) {
  for (int i = 0; i < std::max(1.0, seconds * 100); ++i) {
    char buf[512];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) return true;
    usleep(10000);
  }
  return false;
}

Message IntruderRegister() {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateRegister(fbb, wire::Role::Worker,
                                   fbb.CreateString("intruder"), 1,
                                   fbb.CreateString(""), -1);
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Register, body.Union(),
                              wire::Role::Worker, -1);
  return msg;
}

// A push of NaN to shard keys [0, 16) at clock 0, as worker 0.
Message IntruderNanPush() {
  flatbuffers::FlatBufferBuilder fbb(128);
  std::vector<wire::KeyRange> ranges = {wire::KeyRange(0, 16)};
  auto body =
      wire::CreatePush(fbb, 0, 0, 32, fbb.CreateVectorOfStructs(ranges));
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Push, body.Union(),
                              wire::Role::Worker, 0);
  zmq::message_t values(16 * sizeof(float));
  auto* v = static_cast<float*>(values.data());
  for (int i = 0; i < 16; ++i) v[i] = std::numeric_limits<float>::quiet_NaN();
  msg.payloads.push_back(std::move(values));
  return msg;
}

// Whether a plaintext or wrong-key ZeroMQ client gets any answer within
// 1.5 s for `msg` from the CURVE server whose public key (no secret: the
// intruder may well know it) is `server_public`.
bool IntruderAnswered(const std::string& endpoint, const RoleKeys* keys,
                      const std::string& server_public, Message&& msg) {
  zmq::socket_t socket = CurveDealer(endpoint, keys, server_public);
  (void)SendMessage(socket, false, std::move(msg));
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  return PollSockets(&item, 1, std::chrono::milliseconds(1500)) > 0;
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

// Two network namespaces joined by a veth pair: the job's (address
// 10.213.N.1) and the intruder's (10.213.N.2); removed with the object.
class IntruderNetwork {
 public:
  IntruderNetwork() {
    const std::string id = std::to_string(getpid());
    const std::string net = "10.213." + std::to_string(getpid() % 250) + ".";
    job_ = "lsi-job-" + id;
    outside_ = "lsi-out-" + id;
    job_address_ = net + "1";
    ok_ =
        Run("ip netns add " + job_) && Run("ip netns add " + outside_) &&
        Run("ip link add lsij" + id + " netns " + job_ +
            " type veth peer name lsio" + id + " netns " + outside_) &&
        Run("ip -n " + job_ + " addr add " + net + "1/24 dev lsij" + id) &&
        Run("ip -n " + outside_ + " addr add " + net + "2/24 dev lsio" + id) &&
        Run("ip -n " + job_ + " link set lsij" + id + " up") &&
        Run("ip -n " + outside_ + " link set lsio" + id + " up") &&
        Run("ip -n " + job_ + " link set lo up");
  }
  ~IntruderNetwork() {
    Run("ip netns del " + job_ + " 2>/dev/null");
    Run("ip netns del " + outside_ + " 2>/dev/null");
  }
  IntruderNetwork(const IntruderNetwork&) = delete;
  IntruderNetwork& operator=(const IntruderNetwork&) = delete;

  bool ok() const { return ok_; }
  const std::string& job() const { return job_; }
  const std::string& job_address() const { return job_address_; }
  // Moves the calling process into the intruder's namespace.
  bool EnterOutside() const {
    const int fd = open(("/var/run/netns/" + outside_).c_str(), O_RDONLY);
    const bool entered = fd >= 0 && setns(fd, CLONE_NEWNET) == 0;
    if (fd >= 0) close(fd);
    return entered;
  }

 private:
  static bool Run(const std::string& command) {
    return std::system(command.c_str()) == 0;
  }
  std::string job_, outside_, job_address_;
  bool ok_ = false;
};

// What the intruder aims at, and what it overheard.
struct IntruderTargets {
  std::string control, data, metrics, coordinator_public;
  std::string recorded_proof;  // a real client proof, taken off the wire
  std::string other_keys;      // another job's keys
};

// Collects what was not refused (empty: everything was).
class IntruderFindings {
 public:
  void Check(bool refused, const std::string& what) {
    if (!refused) wrong_.push_back(what);
  }
  const std::vector<std::string>& wrong() const { return wrong_; }

 private:
  std::vector<std::string> wrong_;
};

// The control plane: plaintext, and another job's keys.
void AttackControlPlane(const IntruderTargets& t, IntruderFindings& f) {
  const RoleKeys other_worker = *LoadRoleKeys(t.other_keys + "/worker.key");
  const RoleKeys other_admin = *LoadRoleKeys(t.other_keys + "/admin.key");
  f.Check(!IntruderAnswered(t.control, nullptr, t.coordinator_public,
                            IntruderRegister()),
          "a plaintext Register was answered");
  f.Check(!IntruderAnswered(t.control, &other_worker, t.coordinator_public,
                            IntruderRegister()),
          "another job's worker key was answered");
  Message round;
  flatbuffers::FlatBufferBuilder fbb(64);
  round.header = FinishEnvelope(fbb, wire::Body::SnapshotStart,
                                wire::CreateSnapshotStart(fbb, 0, 0, 0).Union(),
                                wire::Role::Tool, 0);
  f.Check(!IntruderAnswered(t.control, &other_admin, t.coordinator_public,
                            std::move(round)),
          "another job's admin key got a snapshot round");
  Message shutdown;
  shutdown.header =
      MakeShutdownHeader(wire::ShutdownKind::Aborted, "intruder says stop");
  f.Check(!IntruderAnswered(t.control, &other_admin, t.coordinator_public,
                            std::move(shutdown)),
          "another job's admin key was answered for a Shutdown");
}

// The data plane: a NaN push (then a pull) without the handshake, and a
// proof overheard on the wire replayed on a fresh connection; none of it
// is read as a message before a proof, whether the send completes or not.
void AttackDataPlane(const IntruderTargets& t, IntruderFindings& f) {
  auto channel = DataChannel::Connect(t.data, 5);  // no key installed here
  if (channel.ok()) {
    (void)(*channel)->Send(IntruderNanPush());
    Message reply;
    bool closed = false;
    for (int i = 0; i < 300 && !closed; ++i) {
      closed = !(*channel)->Receive(&reply).ok();
      usleep(10000);
    }
    f.Check(closed, "the server kept an unauthenticated connection");
  } else {
    f.Check(false, "cannot reach the data port: " + channel.status().message());
  }
  const int replay = IntruderDial(t.data);
  char hello[kServerHelloBytes];
  const bool replayed =
      replay >= 0 &&
      recv(replay, hello, sizeof(hello), MSG_WAITALL) ==
          static_cast<ssize_t>(sizeof(hello)) &&
      send(replay, t.recorded_proof.data(), t.recorded_proof.size(),
           MSG_NOSIGNAL) == static_cast<ssize_t>(t.recorded_proof.size());
  f.Check(replayed && IntruderClosedWithin(replay, 5),
          "a replayed proof was not refused");
  if (replay >= 0) close(replay);
}

// The metrics port without and with a wrong token, and 2,000 idle
// connections, half on a data port, half on the control port: each is
// closed once it failed to authenticate in time.
void AttackPortsAndIdle(const IntruderTargets& t, IntruderFindings& f) {
  f.Check(HttpRequest(t.metrics, "GET /metrics HTTP/1.0\r\n\r\n").find("401") !=
              std::string::npos,
          "metrics served without a token");
  f.Check(HttpRequest(t.metrics,
                      "GET /metrics HTTP/1.0\r\nAuthorization: Bearer "
                      "guess\r\n\r\n")
                  .find("401") != std::string::npos,
          "metrics served for a wrong token");

  std::vector<int> idle;
  for (int i = 0; i < kIdleConnections; ++i) {
    const int fd = IntruderDial(i % 2 == 0 ? t.data : t.control);
    if (fd < 0) break;
    idle.push_back(fd);
  }
  f.Check(idle.size() == kIdleConnections, "could not open every connection");
  size_t closed_idle = 0;
  for (int fd : idle) {
    // 10 s to authenticate (kHandshakeDeadlineMs), then some slack.
    if (IntruderClosedWithin(fd, closed_idle == 0 ? 20 : 0.01)) ++closed_idle;
    close(fd);
  }
  f.Check(closed_idle >= kIdleConnections * 9 / 10,
          std::to_string(closed_idle) + " of the idle connections closed");
}

// Every attack; what was not refused (empty: everything was).
std::vector<std::string> IntruderAttacks(const IntruderTargets& t) {
  IntruderFindings findings;
  AttackControlPlane(t, findings);
  AttackDataPlane(t, findings);
  AttackPortsAndIdle(t, findings);
  return findings.wrong();
}

// A real client proof of the job's worker key, as a host on the path
// would record it from the wire.
std::string RecordedProof(const RoleKeys& worker) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair) != 0) return "";
  ServerHandshake recorder(worker);
  (void)send(pair[0], recorder.hello().data(), recorder.hello().size(), 0);
  std::thread client([&] { (void)ClientHandshake(pair[1], worker, 5); });
  std::string recorded;
  for (int i = 0; i < 500 && recorded.size() < kClientProofBytes; ++i) {
    char buf[kClientProofBytes];
    const ssize_t n =
        recv(pair[0], buf, kClientProofBytes - recorded.size(), 0);
    if (n > 0) recorded.append(buf, n);
    if (n <= 0) usleep(2000);
  }
  close(pair[0]);
  client.join();
  close(pair[1]);
  return recorded;
}

// Runs IntruderAttacks in a child moved into the intruder's namespace;
// what it found wrong, one line each.
std::string AttackFromOutside(const IntruderNetwork& network,
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
  const IntruderNetwork network;
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
  targets.recorded_proof = RecordedProof(worker);
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
