#include "tests/integration/data_plane_probe.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <regex>

#include "common/security/job_keys.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {
namespace {

// Receives one message from `socket`, waiting at most 5 s.
template <typename Socket>
Status AwaitMessage(Socket& socket, Message* out) {
  for (int i = 0; i < 50; ++i) {
    LS_ASSIGN_OR_RETURN(bool got, socket.Receive(out));
    if (got) return Status::Ok();
    zmq::pollitem_t item = socket.PollItem();
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
  }
  return DeadlineExceeded("no reply");
}

// Adapts a coordinator-side ZeroMQ DEALER to AwaitMessage.
struct DealerSocket {
  zmq::socket_t& socket;
  StatusOr<bool> Receive(Message* out) {
    return ReceiveMessage(socket, false, out);
  }
  zmq::pollitem_t PollItem() {
    return {static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
  }
};

// Awaits an Error reply and returns its code (*text: its message).
template <typename Socket>
StatusOr<wire::ErrorCode> ExpectError(Socket& socket, std::string* text) {
  Message reply;
  LS_RETURN_IF_ERROR(AwaitMessage(socket, &reply));
  LS_RETURN_IF_ERROR(VerifyHeader(&reply));
  if (reply.envelope->body_type() != wire::Body::Error) {
    return Internal("reply is not an Error");
  }
  *text = flatbuffers::GetString(reply.envelope->body_as_Error()->message());
  return reply.envelope->body_as_Error()->code();
}

// Awaits a PushAck and returns its status (*reason: its reason).
template <typename Socket>
StatusOr<wire::PushStatus> ExpectPushAck(Socket& socket, std::string* reason) {
  Message reply;
  LS_RETURN_IF_ERROR(AwaitMessage(socket, &reply));
  LS_RETURN_IF_ERROR(VerifyHeader(&reply));
  if (reply.envelope->body_type() != wire::Body::PushAck) {
    return Internal(std::string("reply is a ") +
                    BodyName(reply.envelope->body_type()) + ", not a PushAck");
  }
  *reason = flatbuffers::GetString(reply.envelope->body_as_PushAck()->reason());
  return reply.envelope->body_as_PushAck()->status();
}

}  // namespace

SpeakAsWorker::SpeakAsWorker(TestCluster& cluster, int32_t rank) {
  auto keys = LoadRoleKeys(cluster.keys_dir() + "/worker.key");
  EXPECT_TRUE(keys.ok()) << keys.status().message();
  if (keys.ok()) InstallTransportKeys(*keys);
  auto server = LoadRoleKeys(cluster.keys_dir() + "/server.key");
  EXPECT_TRUE(server.ok()) << server.status().message();
  if (!server.ok()) return;
  auto mint = TicketMint::Create(*server);
  EXPECT_TRUE(mint.ok()) << mint.status().message();
  if (mint.ok()) ticket_ = mint->Mint(TicketRole::kWorker, rank);
  auto seal = FactSeal::Create(*server);
  EXPECT_TRUE(seal.ok()) << seal.status().message();
  if (seal.ok()) seal_.emplace(std::move(*seal));
}

PushShows SpeakAsWorker::Admitted(int64_t clock, uint32_t quota) const {
  PushShows shows;
  shows.quota = quota;
  if (seal_) {
    shows.quota_seal = seal_->Seal(
        AdmittedQuota{ticket_.rank, ticket_.incarnation, clock, quota});
  }
  return shows;
}

SpeakAsWorker::~SpeakAsWorker() { InstallTransportKeys(std::nullopt); }

zmq::message_t Bytes(const std::string& text) {
  return zmq::message_t(text.data(), text.size());
}

zmq::message_t PushHeader(int sender_rank, uint64_t begin, uint64_t end,
                          uint32_t batch, int64_t clock,
                          const PushShows& shows) {
  flatbuffers::FlatBufferBuilder fbb(128);
  std::vector<wire::KeyRange> ranges = {wire::KeyRange(begin, end)};
  auto body = wire::CreatePush(
      fbb, 42, clock, batch, fbb.CreateVectorOfStructs(ranges), 0, 0, 0,
      shows.verdict, 0, -1, false, shows.quota,
      BytesField(fbb, shows.quota_seal), BytesField(fbb, shows.verdict_seal));
  return FinishEnvelope(fbb, wire::Body::Push, body.Union(), wire::Role::Worker,
                        sender_rank);
}

zmq::message_t PullHeader(int sender_rank, uint64_t begin, uint64_t end,
                          int64_t clock, int64_t eval_point) {
  flatbuffers::FlatBufferBuilder fbb(128);
  std::vector<wire::KeyRange> ranges = {wire::KeyRange(begin, end)};
  auto body = wire::CreatePull(
      fbb, 43, clock, fbb.CreateVectorOfStructs(ranges), 0, 0, eval_point);
  return FinishEnvelope(fbb, wire::Body::Pull, body.Union(), wire::Role::Worker,
                        sender_rank);
}

Message MessageOf(std::vector<zmq::message_t> frames) {
  Message msg;
  msg.header = std::move(frames[0]);
  for (size_t i = 1; i < frames.size(); ++i) {
    msg.payloads.push_back(std::move(frames[i]));
  }
  return msg;
}

StatusOr<wire::ErrorCode> SendExpectError(zmq::socket_t& socket,
                                          std::vector<zmq::message_t> frames,
                                          std::string* text) {
  LS_RETURN_IF_ERROR(SendMessage(socket, false, MessageOf(std::move(frames))));
  DealerSocket dealer{socket};
  return ExpectError(dealer, text);
}

StatusOr<wire::ErrorCode> SendExpectError(DataChannel& channel,
                                          std::vector<zmq::message_t> frames,
                                          std::string* text) {
  LS_RETURN_IF_ERROR(channel.Send(MessageOf(std::move(frames))));
  return ExpectError(channel, text);
}

StatusOr<Message> SendAwaitReply(zmq::socket_t& socket,
                                 std::vector<zmq::message_t> frames) {
  LS_RETURN_IF_ERROR(SendMessage(socket, false, MessageOf(std::move(frames))));
  DealerSocket dealer{socket};
  Message reply;
  LS_RETURN_IF_ERROR(AwaitMessage(dealer, &reply));
  LS_RETURN_IF_ERROR(VerifyHeader(&reply));
  return reply;
}

StatusOr<wire::PushStatus> SendExpectPushAck(DataChannel& channel,
                                             std::vector<zmq::message_t> frames,
                                             std::string* reason) {
  LS_RETURN_IF_ERROR(channel.Send(MessageOf(std::move(frames))));
  return ExpectPushAck(channel, reason);
}

std::string AwaitServerEndpoint(TestCluster& cluster, const std::string& name) {
  const std::regex on_endpoint(" on ((zmq\\+)?(tcp|ipc)://[^ ]+) ");
  for (int i = 0; i < 300; ++i) {
    cluster.Pump(std::chrono::milliseconds(100));
    for (const auto& line : cluster.Lines(name)) {
      std::smatch m;
      if (std::regex_search(line, m, on_endpoint)) return m[1];
    }
  }
  return "";
}

zmq::message_t ZeroFloats(size_t count) {
  zmq::message_t frame(count * sizeof(float));
  std::memset(frame.data(), 0, frame.size());
  return frame;
}

void ExpectRefusedPush(DataChannel& channel, zmq::message_t header,
                       const std::string& why) {
  std::vector<zmq::message_t> frames;
  frames.push_back(std::move(header));
  frames.push_back(ZeroFloats(4));
  std::string reason;
  const auto status = SendExpectPushAck(channel, std::move(frames), &reason);
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ(*status, wire::PushStatus::Refused) << why;
  EXPECT_NE(reason.find(why), std::string::npos) << reason;
}

zmq::message_t SubscribeAsBackupHeader() {
  flatbuffers::FlatBufferBuilder fbb(96);
  auto body = wire::CreateReplicaAck(fbb, 0, 0, fbb.CreateString("tcp://x:1"));
  return FinishEnvelope(fbb, wire::Body::ReplicaAck, body.Union(),
                        wire::Role::Server, 0);
}

bool AwaitClocks(TestCluster& cluster, int clocks) {
  const std::regex committed("\nlockstep_clock ([0-9]+)");
  for (int i = 0; i < 300; ++i) {
    std::smatch m;
    const std::string text = cluster.CoordinatorMetrics();
    if (std::regex_search(text, m, committed) && std::stoi(m[1]) >= clocks) {
      return true;
    }
    cluster.Pump(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace lockstep
