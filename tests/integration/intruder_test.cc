// An intruder without the job's keys against a live job (security on, as
// every launch path runs it): it tries to register, to push (NaN too) and
// pull on a server's data port, to replay a handshake it recorded, to ask
// for a snapshot round and a shutdown with another job's admin key, to
// scrape the metrics, and to hold 2,000 idle connections. Every attempt is
// refused and counted; the job trains to its accuracy, every clock
// committed.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
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

TEST(IntruderTest, EveryAttemptWithoutTheKeyIsRefusedAndTheJobTrains) {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  ASSERT_GT(files.rlim_cur, rlim_t{kIdleConnections + 200});
  TempDir tmp("lockstep-intruder");
  const std::string run_dir = tmp.path() + "/run";
  const std::string token = tmp.path() + "/token";
  std::ofstream(token) << "s3cret-metrics-token\n";
  chmod(token.c_str(), 0600);
  TestCluster cluster;
  ASSERT_TRUE(
      cluster
          .StartCoordinator(IntruderJob(),
                            {"--run-dir", run_dir, "--metrics-listen",
                             "127.0.0.1:0", "--metrics-token-file", token})
          .ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  // A floor under each clock keeps the job running through the attack.
  for (int w = 0; w < 2; ++w) {
    ASSERT_TRUE(
        cluster.StartWorker(w, {"--hetero", "linear=0.02+0.0003"}).ok());
  }
  const std::string data = IntruderServerEndpoint(cluster, 0);
  ASSERT_FALSE(data.empty())
      << cluster.Output("server 0") << cluster.Output("coordinator")
      << cluster.Output("worker 0");
  const std::string control = cluster.endpoint();

  // The control plane: plaintext, and another job's keys.
  TempDir other_dir("lockstep-other-job");
  ASSERT_TRUE(WriteJobKeys(other_dir.path(), DataSecurity::kAuth).ok());
  const RoleKeys other_worker = *LoadRoleKeys(other_dir.path() + "/worker.key");
  const RoleKeys other_admin = *LoadRoleKeys(other_dir.path() + "/admin.key");
  const RoleKeys worker = *LoadRoleKeys(cluster.keys_dir() + "/worker.key");
  const std::string coordinator_public =
      worker.public_key(KeyRole::kCoordinator);
  EXPECT_FALSE(IntruderAnswered(control, nullptr, coordinator_public,
                                IntruderRegister()));
  EXPECT_FALSE(IntruderAnswered(control, &other_worker, coordinator_public,
                                IntruderRegister()));
  Message round;
  flatbuffers::FlatBufferBuilder fbb(64);
  round.header = FinishEnvelope(fbb, wire::Body::SnapshotStart,
                                wire::CreateSnapshotStart(fbb, 0, 0, 0).Union(),
                                wire::Role::Tool, 0);
  EXPECT_FALSE(IntruderAnswered(control, &other_admin, coordinator_public,
                                std::move(round)));
  Message shutdown;
  shutdown.header =
      MakeShutdownHeader(wire::ShutdownKind::Aborted, "intruder says stop");
  EXPECT_FALSE(IntruderAnswered(control, &other_admin, coordinator_public,
                                std::move(shutdown)));

  // The data plane: a pull and a NaN push without the handshake.
  auto pull = DataChannel::Connect(data, 5);  // no key installed here
  ASSERT_TRUE(pull.ok());
  // Whether the send completes is the server's business: none of it is
  // read as a message before a proof.
  (void)(*pull)->Send(IntruderNanPush());
  Message reply;
  bool closed = false;
  for (int i = 0; i < 300 && !closed; ++i) {
    closed = !(*pull)->Receive(&reply).ok();
    usleep(10000);
  }
  EXPECT_TRUE(closed) << "the server kept an unauthenticated connection";
  // A proof recorded from a real handshake (the test holds the job's
  // worker key for that), replayed on a fresh connection.
  auto honest = ConnectDirect(data, 5);
  ASSERT_TRUE(honest.ok());
  ASSERT_TRUE(ClientHandshake(*honest, worker, 5).ok());
  close(*honest);
  // ClientHandshake does not hand its bytes out: record them by running it
  // over a socket pair whose other end is a ServerHandshake here.
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair), 0);
  ServerHandshake recorder(worker);
  ASSERT_EQ(send(pair[0], recorder.hello().data(), recorder.hello().size(), 0),
            static_cast<ssize_t>(recorder.hello().size()));
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
  ASSERT_EQ(recorded.size(), kClientProofBytes);
  const int replay = IntruderDial(data);
  ASSERT_GE(replay, 0);
  char hello[kServerHelloBytes];
  ASSERT_EQ(recv(replay, hello, sizeof(hello), MSG_WAITALL),
            static_cast<ssize_t>(sizeof(hello)));
  ASSERT_EQ(send(replay, recorded.data(), recorded.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(recorded.size()));
  EXPECT_TRUE(IntruderClosedWithin(replay, 5));
  close(replay);

  // The metrics port, without and with a wrong token.
  std::string metrics;
  for (int i = 0; i < 100 && metrics.empty(); ++i) {
    for (const auto& line : cluster.Lines("coordinator")) {
      if (line.rfind("@metrics ", 0) == 0) metrics = line.substr(9);
    }
    cluster.Pump(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(metrics.empty());
  EXPECT_NE(HttpRequest(metrics, "GET /metrics HTTP/1.0\r\n\r\n").find("401"),
            std::string::npos);
  EXPECT_NE(HttpRequest(metrics,
                        "GET /metrics HTTP/1.0\r\nAuthorization: Bearer "
                        "guess\r\n\r\n")
                .find("401"),
            std::string::npos);

  // 2,000 idle connections, half on a data port, half on the control
  // port: each is closed once it failed to authenticate in time.
  std::vector<int> idle;
  for (int i = 0; i < kIdleConnections; ++i) {
    const int fd = IntruderDial(i % 2 == 0 ? data : control);
    ASSERT_GE(fd, 0) << "connection " << i;
    idle.push_back(fd);
  }
  int closed_idle = 0;
  for (int fd : idle) {
    // 10 s to authenticate (kHandshakeDeadlineMs), then some slack.
    if (IntruderClosedWithin(fd, closed_idle == 0 ? 20 : 0.01)) ++closed_idle;
    close(fd);
  }
  EXPECT_GE(closed_idle, kIdleConnections * 9 / 10);

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
}

}  // namespace
}  // namespace lockstep
