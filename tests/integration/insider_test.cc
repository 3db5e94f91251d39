// A worker holding the job's genuine key and its own genuine ticket tries
// to act as someone else or to claim more than it was admitted: on the data
// plane each attempt is refused (and counted against it by reason in
// /metrics); a Register for a live rank and a late Describe of another job
// are refused without harm to the job; its heartbeats for a rank that died
// do not keep that rank alive. The job trains to its end with the honest
// processes.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/job_shape.h"
#include "common/security/worker_credentials.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/job_shape_codec.h"
#include "common/wire/message.h"
#include "tests/integration/data_plane_probe.h"
#include "tests/integration/test_cluster.h"

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
  // Room for one more: the insider joins as its own worker too.
  job.max_workers = 3;
  job.data_order = "global";  // a joiner reads the whole set
  // The test's insider shares worker 1's ticket with the honest process:
  // removing "worker 1" for its refusals would end the honest one
  // (PushRefusalsTest covers removal).
  job.max_refused_pushes = 0;
  return job;
}

// Polls /metrics (10 s) until it holds `line`.
bool AwaitMetric(TestCluster& cluster, const std::string& line) {
  for (int i = 0; i < 100; ++i) {
    if (cluster.CoordinatorMetrics().find(line) != std::string::npos)
      return true;
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

// Worker 1's pushes and pulls that claim more than the job admits.
void ClaimMoreThanAdmitted(const SpeakAsWorker& insider, DataChannel& channel) {
  ExpectRefusedPush(channel, PushHeader(1, 0, 4, 0xFFFFFFFFu),
                    "above the job's largest");
  ExpectRefusedPush(channel, PushHeader(1, 0, 4, 8, int64_t{1} << 40),
                    "beyond the clocks this shard admits");
  // Without the coordinator's admission to the clock, with a batch above
  // the quota admitted, with a verdict shard 0 did not give.
  ExpectRefusedPush(channel, PushHeader(1, 0, 4),
                    "without the coordinator's admission");
  ExpectRefusedPush(channel, PushHeader(1, 0, 4, 8, 0, insider.Admitted(0, 4)),
                    "above the quota of 4");
  PushShows verdict = insider.Admitted(0, 8);
  verdict.verdict = wire::PushVerdict::Apply;
  ExpectRefusedPush(channel, PushHeader(1, 0, 4, 8, 0, verdict),
                    "that shard 0 did not give");
  // Clock 0 is long committed: the first admitted push of it is late, not
  // refused; the same push again is a second push of its clock.
  std::vector<zmq::message_t> frames;
  frames.push_back(PushHeader(1, 0, 4, 8, 0, insider.Admitted(0, 8)));
  frames.push_back(ZeroFloats(4));
  std::string text;
  const auto late = SendExpectPushAck(channel, std::move(frames), &text);
  ASSERT_TRUE(late.ok()) << late.status().message();
  EXPECT_EQ(*late, wire::PushStatus::Dropped);
  ExpectRefusedPush(channel, PushHeader(1, 0, 4, 8, 0, insider.Admitted(0, 8)),
                    "a second push of clock 0");
  // Pulls a shard would keep waiting without bound.
  frames.clear();
  frames.push_back(PullHeader(1, 0, 4, int64_t{1} << 40));
  ASSERT_TRUE(SendExpectError(channel, std::move(frames), &text).ok());
  EXPECT_NE(text.find("beyond the clocks this shard admits"), std::string::npos)
      << text;
  frames.clear();
  frames.push_back(PullHeader(1, 0, 4, 0, int64_t{1} << 40));
  ASSERT_TRUE(SendExpectError(channel, std::move(frames), &text).ok());
  EXPECT_NE(text.find("only the evaluator reads an evaluation point"),
            std::string::npos)
      << text;
}

// The Error text of `reply`, or what it was instead.
std::string ErrorText(const StatusOr<Message>& reply) {
  if (!reply.ok()) return reply.status().message();
  if (reply->envelope->body_type() != wire::Body::Error) {
    return std::string("a ") + BodyName(reply->envelope->body_type());
  }
  return flatbuffers::GetString(reply->envelope->body_as_Error()->message());
}

// With the worker key: a Register for worker 1 (alive) is refused; one for
// any rank is welcomed (the job takes a third), and its Describe of another
// job is refused and the process removed while the job goes on.
void JoinAsAnotherAndLie(TestCluster& cluster) {
  auto as_one = ConnectDealer(cluster.endpoint(), "");
  ASSERT_TRUE(as_one.ok()) << as_one.status().message();
  std::vector<zmq::message_t> frames;
  frames.push_back(MakeRegisterHeader(wire::Role::Worker, 1));
  EXPECT_EQ(ErrorText(SendAwaitReply(*as_one, std::move(frames))),
            "worker 1 is held by a live process");

  auto joiner = ConnectDealer(cluster.endpoint(), "");
  ASSERT_TRUE(joiner.ok()) << joiner.status().message();
  frames.clear();
  frames.push_back(MakeRegisterHeader(wire::Role::Worker, -1));
  const auto welcome = SendAwaitReply(*joiner, std::move(frames));
  ASSERT_TRUE(welcome.ok()) << welcome.status().message();
  ASSERT_EQ(welcome->envelope->body_type(), wire::Body::Welcome);
  const auto rank =
      static_cast<int>(welcome->envelope->body_as_Welcome()->rank());
  JobShape other;
  other.model.tensors = {TensorInfo{"w", {1000, 1000}, 0, 0, 0.1f}};
  other.data.input_dim = 1000;
  other.data.classes = 1000;
  other.data.train_samples = 10;
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = JobShapeToWire(fbb, other);
  frames.clear();
  frames.push_back(FinishEnvelope(fbb, wire::Body::Describe, body.Union(),
                                  wire::Role::Worker, rank));
  EXPECT_NE(ErrorText(SendAwaitReply(*joiner, std::move(frames)))
                .find("this process describes a different job"),
            std::string::npos);
}

// Starts `job`'s coordinator (its /metrics served, its records in a fresh
// run folder), server 0 and workers 0 and 1, a floor under each clock so
// that the job runs through the attempts. The server's data endpoint; ""
// when a role did not start.
std::string StartJob(TestCluster& cluster, const JobConfig& job) {
  const Status started = cluster.StartCoordinator(
      job, {"--run-dir", MakeTempDir("lockstep-insider"), "--metrics-listen",
            "127.0.0.1:0"});
  EXPECT_TRUE(started.ok()) << started.message();
  if (!started.ok() || !cluster.StartServer(0).ok()) return "";
  for (int w = 0; w < 2; ++w) {
    if (!cluster.StartWorker(w, {"--hetero", "linear=0.02+0.0003"}).ok()) {
      return "";
    }
  }
  return AwaitServerEndpoint(cluster);
}

TEST(InsiderTest, AWorkerCannotSpeakAsAnotherRankOrAsABackup) {
  TestCluster cluster;
  const std::string endpoint = StartJob(cluster, TwoWorkerJob());
  ASSERT_FALSE(endpoint.empty()) << cluster.Output("server 0");

  // Worker 1's key and ticket, in a process of its own.
  const SpeakAsWorker insider(cluster, 1);
  // Its ticket with another rank written in: the proof fails.
  PeerTicket forged = *insider.ticket();
  forged.rank = 0;
  EXPECT_FALSE(DataChannel::Connect(endpoint, 10, false, &forged).ok());
  EXPECT_TRUE(cluster.AwaitPrinted(
      "server 0", "does not hold the worker 0 ticket it presents", seconds(5)))
      << cluster.Output("server 0");

  auto channel = DataChannel::Connect(endpoint, 10, false, insider.ticket());
  ASSERT_TRUE(channel.ok()) << channel.status().message();
  std::string text;
  // A push that names worker 0 on worker 1's connection.
  std::vector<zmq::message_t> frames;
  frames.push_back(PushHeader(0, 0, 4));
  frames.push_back(ZeroFloats(4));
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

  // Clock 0 committed: a push of it is late.
  ASSERT_TRUE(AwaitClocks(cluster, 3)) << cluster.CoordinatorMetrics();
  ClaimMoreThanAdmitted(insider, **channel);
  // Counted against the worker that sent them, by reason.
  for (const auto& [reason, count] :
       std::vector<std::pair<std::string, int>>{{"impersonation", 1},
                                                {"batch", 1},
                                                {"clock_window", 1},
                                                {"quota", 2},
                                                {"verdict", 1},
                                                {"duplicate", 1}}) {
    EXPECT_TRUE(AwaitMetric(cluster,
                            "lockstep_rejected_pushes_total{worker=\"1\","
                            "reason=\"" +
                                reason + "\"} " + std::to_string(count)))
        << reason << "\n"
        << cluster.CoordinatorMetrics();
  }
  JoinAsAnotherAndLie(cluster);
  EXPECT_EQ(cluster.CoordinatorMetrics().find("{worker=\"0\",reason="),
            std::string::npos);

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

  EXPECT_TRUE(
      cluster.Printed("coordinator", "removed: describes a different job"))
      << cluster.Output("coordinator");

  auto exit = cluster.WaitFor("coordinator", seconds(180));
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(seconds(20)));
  for (const char* role : {"server 0", "worker 1"}) {
    EXPECT_TRUE(cluster.ExitOf(role).ok()) << role << cluster.Output(role);
  }
}

// Registers on `control` as a worker with the keys installed: the ticket
// its Welcome gives, or the Error's text (*refusal).
std::optional<PeerTicket> RegisterForTicket(zmq::socket_t& control,
                                            std::string* refusal) {
  std::vector<zmq::message_t> frames;
  frames.push_back(MakeRegisterHeader(wire::Role::Worker, -1));
  const auto reply = SendAwaitReply(control, std::move(frames));
  EXPECT_TRUE(reply.ok()) << reply.status().message();
  if (!reply.ok()) return std::nullopt;
  if (reply->envelope->body_type() == wire::Body::Error) {
    *refusal =
        flatbuffers::GetString(reply->envelope->body_as_Error()->message());
    return std::nullopt;
  }
  EXPECT_EQ(reply->envelope->body_type(), wire::Body::Welcome);
  const wire::Welcome* given = reply->envelope->body_as_Welcome();
  if (given == nullptr || given->ticket_secret() == nullptr) {
    return std::nullopt;
  }
  PeerTicket ticket;
  ticket.rank = static_cast<int32_t>(given->rank());
  ticket.incarnation = given->ticket_incarnation();
  ticket.secret.assign(
      reinterpret_cast<const char*>(given->ticket_secret()->data()),
      given->ticket_secret()->size());
  return ticket;
}

// An insider with a worker credential of its own (not the shared worker
// key) registers as a third worker, takes the ticket its Welcome gives and
// pushes what it was not admitted to until the coordinator removes it. Its
// ticket still proves its rank, and under ASP a push is applied on arrival
// - but the coordinator fenced that registration at the shards, which
// refuse it (reason fenced), and its credential cannot register again; a
// credential issued to the running job can. The job ends with the honest
// workers.
TEST(InsiderTest, ARemovedPoisonerIsFencedAndItsCredentialBanned) {
  JobConfig job = TwoWorkerJob();
  job.sync = "asp";
  job.max_refused_pushes = 3;  // the insider's own ticket this time
  TestCluster cluster;
  const std::string endpoint = StartJob(cluster, job);
  ASSERT_FALSE(endpoint.empty()) << cluster.Output("server 0");
  ASSERT_TRUE(AwaitClocks(cluster, 3)) << cluster.CoordinatorMetrics();

  const SpeakAsWorker shared(cluster);  // installs worker.key; replaced:
  ASSERT_TRUE(WriteWorkerCredential(cluster.keys_dir(), 7).ok());
  const auto credential = LoadRoleKeys(cluster.keys_dir() + "/worker-7.key");
  ASSERT_TRUE(credential.ok()) << credential.status().message();
  EXPECT_EQ(credential->credential, 7);
  InstallTransportKeys(*credential);
  auto control = ConnectDealer(cluster.endpoint(), "");
  ASSERT_TRUE(control.ok()) << control.status().message();
  std::string refusal;
  const auto ticket = RegisterForTicket(*control, &refusal);
  ASSERT_TRUE(ticket) << refusal;
  auto channel = DataChannel::Connect(endpoint, 10, false, &*ticket);
  ASSERT_TRUE(channel.ok()) << channel.status().message();
  // Pushes it was never admitted to, three in a row: removed.
  for (int64_t clock = 1; clock <= 3; ++clock) {
    ExpectRefusedPush(**channel, PushHeader(ticket->rank, 0, 4, 8, clock),
                      "without the coordinator's admission");
  }
  ASSERT_TRUE(cluster.AwaitPrinted(
      "coordinator", "worker " + std::to_string(ticket->rank) + " removed",
      seconds(10)))
      << cluster.Output("coordinator");
  // The fence reaches the shard after the coordinator said so: until then
  // a push is refused as not admitted.
  std::string reason;
  for (int64_t clock = 4; clock < 100; ++clock) {
    std::vector<zmq::message_t> frames;
    frames.push_back(PushHeader(ticket->rank, 0, 4, 8, clock));
    frames.push_back(ZeroFloats(4));
    const auto status =
        SendExpectPushAck(**channel, std::move(frames), &reason);
    ASSERT_TRUE(status.ok()) << status.status().message();
    EXPECT_EQ(*status, wire::PushStatus::Refused);
    if (reason.find("registration was removed") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cluster.Pump(std::chrono::milliseconds(1));
  }
  EXPECT_NE(reason.find("registration was removed from the job"),
            std::string::npos)
      << reason;
  EXPECT_TRUE(AwaitMetric(cluster, "lockstep_rejected_pushes_total{worker=\"" +
                                       std::to_string(ticket->rank) +
                                       "\",reason=\"fenced\"} 1"))
      << cluster.CoordinatorMetrics();

  // Its credential may not register again, from a new connection too.
  auto again = ConnectDealer(cluster.endpoint(), "");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(RegisterForTicket(*again, &refusal));
  EXPECT_NE(refusal.find("worker credential 7 was removed"), std::string::npos)
      << refusal;
  EXPECT_TRUE(AwaitMetric(cluster, "lockstep_banned_credentials 1"));
  EXPECT_TRUE(AwaitMetric(cluster,
                          "lockstep_refused_registrations_total{reason=\""
                          "banned_credential\"} 1"))
      << cluster.CoordinatorMetrics();
  // A credential issued now joins the running job.
  ASSERT_TRUE(WriteWorkerCredential(cluster.keys_dir(), 8).ok());
  const auto fresh = LoadRoleKeys(cluster.keys_dir() + "/worker-8.key");
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  InstallTransportKeys(*fresh);
  auto newcomer = ConnectDealer(cluster.endpoint(), "");
  ASSERT_TRUE(newcomer.ok()) << newcomer.status().message();
  EXPECT_TRUE(RegisterForTicket(*newcomer, &refusal)) << refusal;

  auto exit = cluster.WaitFor("coordinator", seconds(180));
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(seconds(20)));
  for (const char* role : {"server 0", "worker 0", "worker 1"}) {
    EXPECT_TRUE(cluster.ExitOf(role).ok()) << role << cluster.Output(role);
  }
}

}  // namespace
}  // namespace lockstep
