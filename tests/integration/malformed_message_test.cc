// A malformed, truncated or version-mismatched message sent to any role is
// rejected (answered with an Error or dropped and counted) and the role keeps
// serving: the job still trains to its end.
#include <gtest/gtest.h>

#include <regex>

#include "common/message.h"
#include "common/zmq_socket.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

constexpr auto kJobTimeout = std::chrono::seconds(120);

zmq::message_t Bytes(const std::string& text) {
  return zmq::message_t(text.data(), text.size());
}

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

zmq::message_t PushHeader(int sender_rank, uint64_t begin, uint64_t end) {
  flatbuffers::FlatBufferBuilder fbb(128);
  std::vector<wire::KeyRange> ranges = {wire::KeyRange(begin, end)};
  auto body =
      wire::CreatePush(fbb, 42, 0, 8, fbb.CreateVectorOfStructs(ranges));
  return FinishEnvelope(fbb, wire::Body::Push, body.Union(), wire::Role::Worker,
                        sender_rank);
}

// Sends `frames` as one message and returns the Error reply's code.
StatusOr<wire::ErrorCode> SendExpectError(zmq::socket_t& socket,
                                          std::vector<zmq::message_t> frames,
                                          std::string* text) {
  Message msg;
  msg.header = std::move(frames[0]);
  for (size_t i = 1; i < frames.size(); ++i) {
    msg.payloads.push_back(std::move(frames[i]));
  }
  LS_RETURN_IF_ERROR(SendMessage(socket, false, std::move(msg)));
  zmq::pollitem_t item{static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, std::chrono::milliseconds(5000)) == 0) {
    return DeadlineExceeded("no reply");
  }
  Message reply;
  LS_RETURN_IF_ERROR(ReceiveMessage(socket, false, &reply).status());
  LS_RETURN_IF_ERROR(VerifyHeader(&reply));
  if (reply.envelope->body_type() != wire::Body::Error) {
    return Internal("reply is not an Error");
  }
  *text = flatbuffers::GetString(reply.envelope->body_as_Error()->message());
  return reply.envelope->body_as_Error()->code();
}

std::vector<std::string> SmallJob(const std::string& run_dir, int clocks) {
  return {"--servers",     "1",
          "--workers",     "1",
          "--model",       "softmax",
          "--batch",       "16",
          "--clocks",      std::to_string(clocks),
          "--train-limit", "2000",
          "--test-limit",  "500",
          "--eval-every",  "0",
          "--run-dir",     run_dir};
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
  ASSERT_TRUE(cluster.StartCoordinator(SmallJob(run_dir, 50)).ok());
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

  ASSERT_TRUE(cluster.StartServer(0).ok());
  ASSERT_TRUE(cluster.StartWorker(0).ok());
  ExpectJobFinishes(cluster);
  EXPECT_EQ(JsonNumber(ReadFile(run_dir + "/summary.json"), "bad_messages"), 4);
}

TEST(MalformedMessageTest, ServerRejectsBadMessagesAndKeepsServing) {
  const std::string run_dir = MakeTempDir("lockstep-bad-server");
  TestCluster cluster;
  ASSERT_TRUE(cluster.StartCoordinator(SmallJob(run_dir, 3000)).ok());
  ASSERT_TRUE(cluster.StartServer(0).ok());
  ASSERT_TRUE(cluster.StartWorker(0).ok());
  // The shard logs its data endpoint once the coordinator welcomed it.
  std::string endpoint;
  const std::regex on_endpoint(" on (tcp://[0-9.]+:[0-9]+) ");
  for (int i = 0; i < 300 && endpoint.empty(); ++i) {
    cluster.Pump(std::chrono::milliseconds(100));
    for (const auto& line : cluster.Lines("server 0")) {
      std::smatch m;
      if (std::regex_search(line, m, on_endpoint)) endpoint = m[1];
    }
  }
  ASSERT_FALSE(endpoint.empty()) << cluster.Output("server 0");
  auto socket = ConnectDealer(endpoint, "");
  ASSERT_TRUE(socket.ok());
  std::string text;
  std::vector<zmq::message_t> frames;
  frames.push_back(Bytes("\x01\x02garbage"));
  EXPECT_EQ(*SendExpectError(*socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  frames.clear();
  frames.push_back(Truncated(PushHeader(0, 0, 10)));
  EXPECT_EQ(*SendExpectError(*socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  frames.clear();
  frames.push_back(PushHeader(99, 0, 10));  // not a worker of this job
  frames.push_back(zmq::message_t(40));
  EXPECT_EQ(*SendExpectError(*socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  EXPECT_NE(text.find("99"), std::string::npos) << text;
  frames.clear();
  frames.push_back(PushHeader(0, 0, 1u << 30));  // outside the shard
  frames.push_back(zmq::message_t(40));
  EXPECT_EQ(*SendExpectError(*socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  frames.clear();
  frames.push_back(PushHeader(0, 0, 10));  // payload has 7 floats, not 10
  frames.push_back(zmq::message_t(28));
  EXPECT_EQ(*SendExpectError(*socket, std::move(frames), &text),
            wire::ErrorCode::Malformed);
  EXPECT_NE(text.find("28 bytes"), std::string::npos) << text;
  ExpectJobFinishes(cluster);
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
                          "--request-timeout-s", "60"},
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
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateShutdown(fbb, fbb.CreateString("job finished"));
  send(FinishEnvelope(fbb, wire::Body::Shutdown, body.Union(),
                      wire::Role::Coordinator, 0));
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
