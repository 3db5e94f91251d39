// A malformed, truncated or version-mismatched message sent to any role is
// rejected (answered with an Error or dropped and counted) and the role keeps
// serving: the job still trains to its end.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>

#include "common/security/job_keys.h"
#include "common/transport/data_channel.h"
#include "common/transport/stream/frame_reader.h"
#include "common/transport/stream/frame_writer.h"
#include "common/transport/stream/handshake.h"
#include "common/transport/stream/socket.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"
#include "tests/integration/data_plane_probe.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

constexpr auto kJobTimeout = std::chrono::seconds(120);

zmq::message_t RegisterHeader(uint32_t version) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateRegister(fbb, wire::Role::Worker,
                                   fbb.CreateString("test"), 1);
  auto env = wire::CreateEnvelope(fbb, version, wire::Role::Worker, -1,
                                  wire::Body::Register, body.Union());
  fbb.Finish(env);
  return zmq::message_t(fbb.GetBufferPointer(), fbb.GetSize());
}

zmq::message_t Truncated(zmq::message_t whole) {
  return zmq::message_t(whole.data(), whole.size() / 2);
}

JobConfig SmallJob(int clocks) {
  JobConfig job;
  job.servers = 1;
  job.workers = 1;
  job.model = "softmax";
  job.batches = {16};
  job.max_clocks = clocks;
  job.train_limit = 2000;
  job.test_limit = 500;
  job.eval_every = 0;
  return job;
}

void ExpectJobFinishes(TestCluster& cluster) {
  auto exit = cluster.WaitFor("coordinator", kJobTimeout);
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(15)));
  EXPECT_TRUE(cluster.ExitOf("server 0").ok()) << cluster.Output("server 0");
  EXPECT_TRUE(cluster.ExitOf("worker 0").ok()) << cluster.Output("worker 0");
}

TEST(MalformedMessageTest, CoordinatorRejectsBadMessagesAndKeepsServing) {
  const std::string run_dir = MakeTempDir("lockstep-bad-coord");
  TestCluster cluster;
  const SpeakAsWorker as_worker(cluster);
  ASSERT_TRUE(
      cluster.StartCoordinator(SmallJob(50), {"--run-dir", run_dir}).ok());
  auto socket = ConnectDealer(cluster.endpoint(), "");
  ASSERT_TRUE(socket.ok());
  std::string text;
  std::vector<zmq::message_t> frames;
  frames.push_back(Bytes("this is not a flatbuffer"));
  EXPECT_EQ(*SendExpectError(*socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  frames.clear();
  frames.push_back(Truncated(RegisterHeader(kProtocolVersion)));
  EXPECT_EQ(*SendExpectError(*socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  frames.clear();
  frames.push_back(RegisterHeader(999));
  EXPECT_EQ(*SendExpectError(*socket, std::move(frames), &text),
            wire::ErrorCode::VersionMismatch);
  EXPECT_NE(text.find("999"), std::string::npos) << text;
  EXPECT_NE(text.find("version " + std::to_string(kProtocolVersion)),
            std::string::npos)
      << text;
  frames.clear();
  frames.push_back(PushHeader(0, 0, 10));  // data-plane message, wrong role
  EXPECT_EQ(*SendExpectError(*socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  // A frame larger than any header: its sender is disconnected before the
  // coordinator receives it (no answer, not counted), and the others are
  // served on.
  auto oversize = ConnectDealer(cluster.endpoint(), "");
  ASSERT_TRUE(oversize.ok());
  frames.clear();
  frames.push_back(zmq::message_t(kMaxHeaderBytes + 1));
  EXPECT_FALSE(SendExpectError(*oversize, std::move(frames), &text).ok());

  ASSERT_TRUE(cluster.StartServer(0).ok());
  ASSERT_TRUE(cluster.StartWorker(0).ok());
  ExpectJobFinishes(cluster);
  EXPECT_EQ(JsonNumber(ReadFile(run_dir + "/summary.json"), "bad_messages"), 4);
}

// Runs against each data transport: the listen endpoint given to the shard.
class ServerMalformedTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ServerMalformedTest, RejectsBadMessagesAndKeepsServing) {
  const std::string run_dir = MakeTempDir("lockstep-bad-server");
  TestCluster cluster;
  const SpeakAsWorker as_worker(cluster);
  ASSERT_TRUE(
      cluster.StartCoordinator(SmallJob(3000), {"--run-dir", run_dir}).ok());
  ASSERT_TRUE(cluster.StartServer(0, {"--listen", GetParam()}).ok());
  ASSERT_TRUE(cluster.StartWorker(0).ok());
  const std::string endpoint = AwaitServerEndpoint(cluster);
  ASSERT_FALSE(endpoint.empty()) << cluster.Output("server 0");
  EXPECT_EQ(IsZmqDataEndpoint(endpoint), IsZmqDataEndpoint(GetParam()));
  auto channel = DataChannel::Connect(endpoint, 10, false, as_worker.ticket());
  ASSERT_TRUE(channel.ok()) << channel.status().message();
  DataChannel& socket = **channel;
  std::string text;
  std::vector<zmq::message_t> frames;
  frames.push_back(Bytes("\x01\x02garbage"));
  EXPECT_EQ(*SendExpectError(socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  frames.clear();
  frames.push_back(Truncated(PushHeader(0, 0, 10)));
  EXPECT_EQ(*SendExpectError(socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  frames.clear();
  frames.push_back(PushHeader(99, 0, 10));  // not a worker of this job
  frames.push_back(zmq::message_t(40));
  EXPECT_EQ(*SendExpectError(socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  EXPECT_NE(text.find("99"), std::string::npos) << text;
  frames.clear();
  frames.push_back(PushHeader(0, 0, 1u << 30));  // outside the shard
  frames.push_back(zmq::message_t(40));
  EXPECT_EQ(*SendExpectError(socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  frames.clear();
  frames.push_back(PushHeader(0, 0, 10));  // payload has 7 floats, not 10
  frames.push_back(zmq::message_t(28));
  EXPECT_EQ(*SendExpectError(socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  EXPECT_NE(text.find("28 bytes"), std::string::npos) << text;
  frames.clear();
  // A batch above the job's (16): it would weigh the push above the
  // others, or make 2^32-1 optimizer steps of it on arrival. Well-formed,
  // it breaks a rule: refused and reported (server/guard/request_rules.h).
  frames.push_back(PushHeader(0, 0, 10, 4294967295u));
  frames.push_back(zmq::message_t(40));
  const auto refused = SendExpectPushAck(socket, std::move(frames), &text);
  ASSERT_TRUE(refused.ok()) << refused.status().message();
  EXPECT_EQ(*refused, wire::PushStatus::Refused);
  EXPECT_NE(text.find("above the job's largest, 16"), std::string::npos)
      << text;
  ExpectJobFinishes(cluster);
}

INSTANTIATE_TEST_SUITE_P(Transports, ServerMalformedTest,
                         ::testing::Values("tcp://127.0.0.1:0",
                                           "zmq+tcp://127.0.0.1:0"));

// Writes `bytes` on a fresh direct connection and returns true when the
// server closes it (it does so for anything that is not Lockstep framing).
bool ServerClosesAfter(const std::string& endpoint, const PeerTicket& ticket,
                       const std::string& bytes) {
  auto fd = ConnectDirect(endpoint, 10);
  if (!fd.ok()) return false;
  // Past the handshake: the framing is what is under test.
  if (!ClientHandshake(*fd, DataSecurity::kAuth, ticket, 10).ok()) {
    close(*fd);
    return false;
  }
  (void)send(*fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  bool closed = false;
  for (int i = 0; i < 100 && !closed; ++i) {
    char buf[64];
    const ssize_t n = recv(*fd, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) closed = true;
    if (!closed) usleep(50 * 1000);
  }
  close(*fd);
  return closed;
}

std::string Words(std::initializer_list<uint32_t> u32,
                  std::initializer_list<uint64_t> u64) {
  std::string out;
  for (uint32_t w : u32) out.append(reinterpret_cast<const char*>(&w), 4);
  for (uint64_t w : u64) out.append(reinterpret_cast<const char*>(&w), 8);
  return out;
}

// Broken framing on the direct transport (wrong magic, absurd frame counts
// or sizes, a header of 0 bytes) closes that connection only; nothing is
// allocated for the declared sizes and the job trains on.
TEST(MalformedMessageTest, DirectPortClosesBrokenStreamsAndKeepsServing) {
  const std::string run_dir = MakeTempDir("lockstep-bad-stream");
  // Short, under /tmp: a socket path is limited to 107 bytes.
  const std::string ipc =
      "ipc:///tmp/lockstep-bad-stream-" + std::to_string(getpid()) + ".sock";
  TestCluster cluster;
  const SpeakAsWorker as_worker(cluster);
  ASSERT_TRUE(
      cluster.StartCoordinator(SmallJob(3000), {"--run-dir", run_dir}).ok());
  ASSERT_TRUE(cluster.StartServer(0, {"--listen", ipc}).ok());
  ASSERT_TRUE(cluster.StartWorker(0).ok());
  const std::string endpoint = AwaitServerEndpoint(cluster);
  ASSERT_EQ(endpoint, ipc) << cluster.Output("server 0");
  EXPECT_TRUE(ServerClosesAfter(endpoint, *as_worker.ticket(),
                                "GET / HTTP/1.1\r\n\r\n"));
  EXPECT_TRUE(ServerClosesAfter(endpoint, *as_worker.ticket(),
                                Words({kDirectMagic, 0}, {})));
  EXPECT_TRUE(ServerClosesAfter(endpoint, *as_worker.ticket(),
                                Words({kDirectMagic, 1000}, {})));
  EXPECT_TRUE(ServerClosesAfter(endpoint, *as_worker.ticket(),
                                Words({kDirectMagic, 1}, {0})));
  EXPECT_TRUE(ServerClosesAfter(endpoint, *as_worker.ticket(),
                                Words({kDirectMagic, 1}, {uint64_t{1} << 40})));
  EXPECT_TRUE(
      ServerClosesAfter(endpoint, *as_worker.ticket(),
                        Words({kDirectMagic, 2}, {100, uint64_t{1} << 60})));
  // A well-formed prefix declaring a payload frame larger than any of the
  // job's (its model has a few dozen weights): closed before anything is
  // reserved for it.
  EXPECT_TRUE(ServerClosesAfter(
      endpoint, *as_worker.ticket(),
      Words({kDirectMagic, 2}, {8, uint64_t{2} << 20}) + "12345678"));
  // A well-framed message still gets its answer on a new connection.
  auto channel = DataChannel::Connect(endpoint, 10, false, as_worker.ticket());
  ASSERT_TRUE(channel.ok());
  std::vector<zmq::message_t> frames;
  frames.push_back(Bytes("not flatbuffers"));
  std::string text;
  EXPECT_EQ(*SendExpectError(**channel, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  ExpectJobFinishes(cluster);
  int closed = 0;
  for (const auto& line : cluster.Lines("server 0")) {
    if (line.find("closed a data connection") != std::string::npos) ++closed;
  }
  EXPECT_GE(closed, 6) << cluster.Output("server 0");
}

// The worker only talks to peers it connected to; the test plays its
// coordinator, feeds it bad messages, then ends the job.
TEST(MalformedMessageTest, WorkerDropsBadMessagesFromItsCoordinator) {
  std::string bound;
  auto router = BindRouter("tcp://127.0.0.1:0", &bound);
  ASSERT_TRUE(router.ok());
  TestCluster cluster;
  ASSERT_TRUE(cluster
                  .Start({BinaryPath("lockstep-worker"), "--coordinator", bound,
                          "--request-timeout-s", "60", "--security", "off"},
                         "worker")
                  .ok());
  Message reg;
  zmq::pollitem_t item{static_cast<void*>(*router), 0, ZMQ_POLLIN, 0};
  ASSERT_GT(zmq::poll(&item, 1, std::chrono::milliseconds(10000)), 0);
  ASSERT_TRUE(*ReceiveMessage(*router, true, &reg));
  ASSERT_TRUE(VerifyHeader(&reg).ok());
  ASSERT_EQ(reg.envelope->body_type(), wire::Body::Register);

  auto send = [&](zmq::message_t header) {
    Message out;
    out.peer = reg.peer;
    out.header = std::move(header);
    ASSERT_TRUE(SendMessage(*router, true, std::move(out)).ok());
  };
  send(Bytes("garbage"));
  send(Truncated(RegisterHeader(kProtocolVersion)));
  send(RegisterHeader(999));
  send(MakeShutdownHeader(wire::ShutdownKind::Finished, "job finished"));
  auto exit = cluster.WaitFor("worker", std::chrono::seconds(30));
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->ok()) << cluster.Output("worker");
  int dropped = 0;
  bool named_versions = false;
  for (const auto& line : cluster.Lines("worker")) {
    if (line.find("dropped a bad message") != std::string::npos) ++dropped;
    if (line.find("peer speaks version 999") != std::string::npos) {
      named_versions = true;
    }
  }
  EXPECT_EQ(dropped, 3) << cluster.Output("worker");
  EXPECT_TRUE(named_versions) << cluster.Output("worker");
}

}  // namespace
}  // namespace lockstep
