// A worker holding the job's genuine key and its own genuine ticket tries
// to act as someone else: on the data plane each attempt is refused (and a
// push as another rank is counted against it by reason in /metrics); its
// heartbeats for a rank that died do not keep that rank alive. The job
// trains to its end with the honest processes.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <regex>
#include <string>

#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"
#include "tests/integration/data_plane_probe.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/http_request.h"

namespace lockstep {
namespace {

using std::chrono::seconds;

JobConfig TwoWorkerJob() {
  JobConfig job;
  job.servers = 1;
  job.workers = 2;
  job.model = "softmax";
  job.data = "synthetic:samples=2000:test=400:dim=12:classes=3";
  // Runs until its time budget: through the attempts and a death.
  job.max_clocks = 1000000;
  job.budget_s = 12;
  job.eval_every = 0;
  job.heartbeat_ms = 200;  // a silent worker is dead after 2 s
  return job;
}

// The coordinator's /metrics, once it printed where they are.
std::string Metrics(TestCluster& cluster) {
  std::smatch m;
  for (const std::string& line : cluster.Lines("coordinator")) {
    if (std::regex_match(line, m, std::regex("^@metrics (.*)$"))) {
      return HttpRequest(m[1], "GET /metrics HTTP/1.0\r\n\r\n");
    }
  }
  return "";
}

// Polls /metrics (10 s) until it holds `line`.
bool AwaitMetric(TestCluster& cluster, const std::string& line) {
  for (int i = 0; i < 100; ++i) {
    if (Metrics(cluster).find(line) != std::string::npos) return true;
    cluster.Pump(std::chrono::milliseconds(100));
  }
  return false;
}

// A heartbeat as worker `rank`, showing the proof of `ticket`.
Message HeartbeatAs(int rank, const PeerTicket& ticket) {
  flatbuffers::FlatBufferBuilder fbb(128);
  const std::string proof = HeartbeatProof(ticket);
  auto body = wire::CreateHeartbeat(
      fbb, 0, ticket.incarnation,
      fbb.CreateVector(reinterpret_cast<const uint8_t*>(proof.data()),
                       proof.size()));
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(),
                              wire::Role::Worker, rank);
  return msg;
}

zmq::message_t SubscribeAsBackupHeader() {
  flatbuffers::FlatBufferBuilder fbb(96);
  auto body = wire::CreateReplicaAck(fbb, 0, 0, fbb.CreateString("tcp://x:1"));
  return FinishEnvelope(fbb, wire::Body::ReplicaAck, body.Union(),
                        wire::Role::Server, 0);
}

TEST(InsiderTest, AWorkerCannotSpeakAsAnotherRankOrAsABackup) {
  const std::string run_dir = MakeTempDir("lockstep-insider");
  TestCluster cluster;
  ASSERT_TRUE(cluster
                  .StartCoordinator(
                      TwoWorkerJob(),
                      {"--run-dir", run_dir, "--metrics-listen", "127.0.0.1:0"})
                  .ok());
  ASSERT_TRUE(cluster.StartServer(0).ok());
  // A floor under each clock keeps the job running through the attempts.
  for (int w = 0; w < 2; ++w) {
    ASSERT_TRUE(
        cluster.StartWorker(w, {"--hetero", "linear=0.02+0.0003"}).ok());
  }
  const std::string endpoint = AwaitServerEndpoint(cluster);
  ASSERT_FALSE(endpoint.empty()) << cluster.Output("server 0");

  // Worker 1's key and ticket, in a process of its own.
  const SpeakAsWorker insider(cluster, 1);
  // Its ticket with another rank written in: the proof fails.
  PeerTicket forged = *insider.ticket();
  forged.rank = 0;
  EXPECT_FALSE(DataChannel::Connect(endpoint, 10, false, &forged).ok());
  bool said = false;
  for (int i = 0; i < 50 && !said; ++i) {
    cluster.Pump(std::chrono::milliseconds(100));
    said = cluster.Printed("server 0",
                           "does not hold the worker 0 ticket it presents");
  }
  EXPECT_TRUE(said) << cluster.Output("server 0");

  auto channel = DataChannel::Connect(endpoint, 10, false, insider.ticket());
  ASSERT_TRUE(channel.ok()) << channel.status().message();
  std::string text;
  // A push that names worker 0 on worker 1's connection.
  std::vector<zmq::message_t> frames;
  frames.push_back(PushHeader(0, 0, 4));
  frames.push_back(zmq::message_t(16));
  ASSERT_TRUE(SendExpectError(**channel, std::move(frames), &text).ok());
  EXPECT_NE(text.find("worker 1's connection sent a Push as worker 0"),
            std::string::npos)
      << text;
  // Subscribing as a backup of the shard: a server's ticket only.
  frames.clear();
  frames.push_back(SubscribeAsBackupHeader());
  ASSERT_TRUE(SendExpectError(**channel, std::move(frames), &text).ok());
  EXPECT_NE(text.find("a replica subscription needs a server's ticket"),
            std::string::npos)
      << text;
  // Its own rank is not refused for who it is (the frames are wrong).
  frames.clear();
  frames.push_back(PushHeader(1, 0, 4));
  ASSERT_TRUE(SendExpectError(**channel, std::move(frames), &text).ok());
  EXPECT_EQ(text.find("connection sent"), std::string::npos) << text;

  // Counted against the worker that sent it, by reason.
  EXPECT_TRUE(AwaitMetric(
      cluster,
      "lockstep_rejected_pushes_total{worker=\"1\",reason=\"impersonation\"} "
      "1"))
      << Metrics(cluster);
  EXPECT_EQ(Metrics(cluster).find("{worker=\"0\",reason="), std::string::npos);

  // Worker 0 dies; the insider heartbeats for it from a socket of its own,
  // as a worker's heartbeat thread does, with its own ticket's proof.
  auto beats = ConnectDealer(cluster.endpoint(), "");
  ASSERT_TRUE(beats.ok()) << beats.status().message();
  ASSERT_EQ(kill(cluster.Pid("worker 0"), SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  bool dead = false;
  while (!dead && std::chrono::steady_clock::now() - killed < seconds(30)) {
    ASSERT_TRUE(
        SendMessage(*beats, false, HeartbeatAs(0, *insider.ticket())).ok());
    cluster.Pump(std::chrono::milliseconds(100));
    dead = cluster.Printed("coordinator", "sent nothing for");
  }
  EXPECT_TRUE(dead) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed(
      "coordinator", "a heartbeat for worker 0 without that rank's ticket"))
      << cluster.Output("coordinator");

  auto exit = cluster.WaitFor("coordinator", seconds(180));
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(seconds(20)));
  for (const char* role : {"server 0", "worker 1"}) {
    EXPECT_TRUE(cluster.ExitOf(role).ok()) << role << cluster.Output(role);
  }
}

}  // namespace
}  // namespace lockstep
