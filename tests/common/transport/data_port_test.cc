#include "common/transport/data_port.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/security/job_keys.h"
#include "common/transport/data_channel.h"
#include "common/transport/stream/frame_reader.h"
#include "common/transport/stream/frame_writer.h"
#include "common/transport/stream/handshake.h"
#include "common/transport/stream/socket.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zmq_socket.h"
#include "tests/support/echo_server.h"

namespace lockstep {
namespace {

// `endpoint` with "@PID" replaced by this process's id.
std::string WithPid(std::string endpoint) {
  if (const auto at = endpoint.find("@PID"); at != std::string::npos) {
    endpoint.replace(at, 4, std::to_string(getpid()));
  }
  return endpoint;
}

class DataPortTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string Listen() const { return WithPid(GetParam()); }
};

TEST_P(DataPortTest, BindsInTheFormItWasGiven) {
  auto port = DataPort::Bind(Listen());
  ASSERT_TRUE(port.ok()) << port.status().message();
  EXPECT_EQ(IsZmqDataEndpoint((*port)->bound()), IsZmqDataEndpoint(Listen()));
  if (Listen().find(":0") != std::string::npos) {
    EXPECT_EQ((*port)->bound().find(":0"), std::string::npos);
  }
}

// Several clients with many large requests in flight: the server's replies
// queue while a client is still sending, so nobody deadlocks, and every
// byte comes back to the client that sent it.
TEST_P(DataPortTest, EchoesPipelinedLargeMessagesToEachClient) {
  auto port = DataPort::Bind(Listen());
  ASSERT_TRUE(port.ok()) << port.status().message();
  const std::string endpoint = (*port)->bound();
  EchoServer server(std::move(*port));
  constexpr size_t kBytes = 3 << 20;
  constexpr uint32_t kInFlight = 8;
  std::vector<std::unique_ptr<DataChannel>> clients;
  for (int c = 0; c < 2; ++c) {
    auto channel = DataChannel::Connect(endpoint, 10);
    ASSERT_TRUE(channel.ok()) << channel.status().message();
    clients.push_back(std::move(*channel));
  }
  for (uint32_t n = 0; n < kInFlight; ++n) {
    for (uint32_t c = 0; c < clients.size(); ++c) {
      ASSERT_TRUE(clients[c]->Send(Numbered(n + 100 * c, kBytes)).ok());
    }
  }
  for (uint32_t c = 0; c < clients.size(); ++c) {
    std::vector<Message> got = ReceiveN(*clients[c], kInFlight);
    ASSERT_EQ(got.size(), kInFlight);
    for (uint32_t n = 0; n < kInFlight; ++n) {
      ExpectNumbered(got[n], n + 100 * c, kBytes);
    }
  }
  // Small messages after large ones: nothing is left staged unseen.
  for (uint32_t n = 0; n < 100; ++n) {
    ASSERT_TRUE(clients[0]->Send(Numbered(n, 40)).ok());
  }
  std::vector<Message> small = ReceiveN(*clients[0], 100);
  ASSERT_EQ(small.size(), 100u);
  for (uint32_t n = 0; n < 100; ++n) ExpectNumbered(small[n], n, 40);
}

INSTANTIATE_TEST_SUITE_P(Transports, DataPortTest,
                         ::testing::Values("tcp://127.0.0.1:0",
                                           "ipc:///tmp/lockstep-port-@PID.sock",
                                           "zmq+tcp://127.0.0.1:0",
                                           "inproc://echo:0"));

// With the job's key installed, a direct port serves a connection only once
// the peer proved its ticket, and names the sender by it; anything else is
// refused and counted.
class SecuredDataPortTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = MakeKeys();
    auto keys = LoadRoleKeys(dir_ + "/server.key");
    ASSERT_TRUE(keys.ok()) << keys.status().message();
    InstallTransportKeys(*keys);
  }
  void TearDown() override { InstallTransportKeys(std::nullopt); }
  static std::string MakeKeys() {
    std::string dir =
        (std::filesystem::temp_directory_path() / "secured-port-XXXXXX")
            .string();
    EXPECT_NE(mkdtemp(dir.data()), nullptr);
    EXPECT_TRUE(WriteJobKeys(dir, DataSecurity::kAuth).ok());
    return dir;
  }
  std::string dir_;
};

TEST_P(SecuredDataPortTest, ServesOnlyPeersThatProveATicket) {
  auto port = DataPort::Bind(WithPid(GetParam()));
  ASSERT_TRUE(port.ok()) << port.status().message();
  const std::string endpoint = (*port)->bound();
  EchoServer server(std::move(*port));
  // Without a ticket a client does not even connect.
  EXPECT_EQ(DataChannel::Connect(endpoint, 10).status().code(),
            StatusCode::kFailedPrecondition);
  auto mint = TicketMint::Create(*InstalledTransportKeys());
  ASSERT_TRUE(mint.ok()) << mint.status().message();
  const PeerTicket ticket = mint->Mint(TicketRole::kWorker, 2);
  auto channel = DataChannel::Connect(endpoint, 10, false, &ticket);
  ASSERT_TRUE(channel.ok()) << channel.status().message();
  ASSERT_TRUE((*channel)->Send(Numbered(7, 3 << 20)).ok());
  std::vector<Message> back = ReceiveN(**channel, 1);
  ASSERT_EQ(back.size(), 1u);
  ExpectNumbered(back[0], 7, 3 << 20);
  EXPECT_EQ(server.last_rank(), 2);

  // A peer that skips the handshake and sends a message at once.
  auto raw = ConnectDirect(endpoint, 10);
  ASSERT_TRUE(raw.ok());
  Message push = Numbered(8, 1 << 10);
  FrameWriter writer;
  ASSERT_TRUE(writer.Enqueue(std::move(push)).ok());
  ASSERT_TRUE(FlushBlocking(*raw, writer, 5).ok());
  EXPECT_TRUE(ClosedByPeer(*raw));
  close(*raw);
  // A peer holding a ticket of another job.
  auto stranger = LoadRoleKeys(MakeKeys() + "/server.key");
  ASSERT_TRUE(stranger.ok());
  auto other_mint = TicketMint::Create(*stranger);
  ASSERT_TRUE(other_mint.ok());
  auto other = ConnectDirect(endpoint, 10);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(ClientHandshake(*other, DataSecurity::kAuth,
                               other_mint->Mint(TicketRole::kWorker, 2), 5)
                   .ok());
  EXPECT_TRUE(ClosedByPeer(*other));
  close(*other);
  server.Stop();
  EXPECT_EQ(server.port().refused_connections(), 2u);
  EXPECT_EQ(server.echoed(), 1u);
}

// Sends `count` messages of 1 MiB on `channel` without reading a reply,
// then reads for up to 5 s: how many replies came back before the
// connection closed (*closed) or all did.
size_t FloodThenRead(DataChannel& channel, uint32_t count, bool* closed) {
  for (uint32_t n = 0; n < count; ++n) {
    if (!channel.Send(Numbered(n, 1 << 20)).ok()) break;
  }
  *closed = false;
  size_t got = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got < count && std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item = channel.PollItem();
    PollSockets(&item, 1, std::chrono::milliseconds(100));
    Message msg;
    StatusOr<bool> one = true;
    while (got < count && (one = channel.Receive(&msg)).ok() && *one) ++got;
    if (!one.ok()) {
      *closed = true;
      break;
    }
  }
  return got;
}

// A worker's connection that leaves more replies unread than the job's
// model allows is closed; a server's (replication streams a whole shard)
// is not.
TEST_P(SecuredDataPortTest, AWorkerThatLeavesRepliesUnreadIsClosed) {
  auto port = DataPort::Bind(WithPid(GetParam()));
  ASSERT_TRUE(port.ok()) << port.status().message();
  (*port)->LimitUnreadReplies(4 << 20);
  const std::string endpoint = (*port)->bound();
  EchoServer server(std::move(*port));
  auto mint = TicketMint::Create(*InstalledTransportKeys());
  ASSERT_TRUE(mint.ok()) << mint.status().message();
  constexpr uint32_t kReplies = 64;  // 64 MiB: past every socket buffer
  const PeerTicket as_server = mint->Mint(TicketRole::kServer, 1);
  auto backup = DataChannel::Connect(endpoint, 10, false, &as_server);
  ASSERT_TRUE(backup.ok()) << backup.status().message();
  bool closed = true;
  EXPECT_EQ(FloodThenRead(**backup, kReplies, &closed), kReplies);
  EXPECT_FALSE(closed);
  const PeerTicket as_worker = mint->Mint(TicketRole::kWorker, 2);
  auto worker = DataChannel::Connect(endpoint, 10, false, &as_worker);
  ASSERT_TRUE(worker.ok()) << worker.status().message();
  EXPECT_LT(FloodThenRead(**worker, kReplies, &closed), kReplies);
  EXPECT_TRUE(closed);
}

INSTANTIATE_TEST_SUITE_P(
    DirectTransports, SecuredDataPortTest,
    ::testing::Values("tcp://127.0.0.1:0",
                      "ipc:///tmp/lockstep-sec-@PID.sock"));

TEST(DataPortErrorTest, SendToAnUnknownPeerFails) {
  auto port = DataPort::Bind("tcp://127.0.0.1:0");
  ASSERT_TRUE(port.ok());
  Message msg;
  msg.peer = std::string("\0\x07\0\0\0", 5);
  msg.header = zmq::message_t(8);
  EXPECT_FALSE((*port)->Send(std::move(msg)).ok());
}

TEST(DataPortErrorTest, ADirectClientSeesTheServerGo) {
  auto port = DataPort::Bind("tcp://127.0.0.1:0");
  ASSERT_TRUE(port.ok());
  const std::string endpoint = (*port)->bound();
  auto channel = DataChannel::Connect(endpoint, 5);
  ASSERT_TRUE(channel.ok());
  port->reset();  // closes the listener and the accepted connection
  Message msg;
  bool failed = false;
  for (int i = 0; i < 100 && !failed; ++i) {
    failed = !(*channel)->Receive(&msg).ok();
    if (!failed) usleep(10000);
  }
  EXPECT_TRUE(failed);
}

// One Process call takes a bounded number of a peer's messages and says
// more are waiting; the rest come with the next calls, in order.
TEST(DataPortBacklogTest, TakesAFloodInBoundedBites) {
  auto port = DataPort::Bind("tcp://127.0.0.1:0");
  ASSERT_TRUE(port.ok());
  DataPort& p = **port;
  auto channel = DataChannel::Connect(p.bound(), 5);
  ASSERT_TRUE(channel.ok());
  constexpr uint32_t kFlood = 3 * DataPort::kMaxMessagesPerRead + 5;
  for (uint32_t n = 0; n < kFlood; ++n) {
    ASSERT_TRUE((*channel)->Send(Numbered(n, 16)).ok());
  }
  std::vector<Message> got;
  size_t most_per_call = 0;
  for (int call = 0; call < 200 && got.size() < kFlood; ++call) {
    std::vector<zmq::pollitem_t> items;
    p.AddPollItems(&items);
    PollSockets(items.data(), items.size(),
                std::chrono::milliseconds(p.Backlogged() ? 0 : 50));
    p.Process(items.data());
    size_t this_call = 0;
    Message msg;
    while (*p.Receive(&msg)) {
      got.push_back(std::move(msg));
      ++this_call;
    }
    most_per_call = std::max(most_per_call, this_call);
  }
  ASSERT_EQ(got.size(), kFlood);
  EXPECT_LE(most_per_call, size_t{DataPort::kMaxMessagesPerRead});
  EXPECT_FALSE(p.Backlogged());
  for (uint32_t n = 0; n < kFlood; ++n) ExpectNumbered(got[n], n, 16);
}

TEST(DataPortIpcTest, NeverTakesOverALiveSocketButReplacesAStaleOne) {
  const std::string path =
      "/tmp/lockstep-port-live-" + std::to_string(getpid()) + ".sock";
  {
    auto first = DataPort::Bind("ipc://" + path);
    ASSERT_TRUE(first.ok()) << first.status().message();
    auto second = DataPort::Bind("ipc://" + path);
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find("running process"),
              std::string::npos);
  }
  EXPECT_NE(access(path.c_str(), F_OK), 0);  // the owner removed its file
  // A file left behind by a process that died without cleaning up.
  std::string bound;
  auto stale = ListenDirect("ipc://" + path, &bound);
  ASSERT_TRUE(stale.ok());
  close(*stale);
  ASSERT_EQ(access(path.c_str(), F_OK), 0);
  auto again = DataPort::Bind("ipc://" + path);
  EXPECT_TRUE(again.ok()) << again.status().message();
}

TEST(DataPortErrorTest, NamesTheSocketFileOfIpcEndpointsOnly) {
  EXPECT_EQ(IpcSocketPath("ipc:///tmp/a.sock"), "/tmp/a.sock");
  EXPECT_EQ(IpcSocketPath("zmq+ipc:///tmp/b.sock"), "/tmp/b.sock");
  EXPECT_EQ(IpcSocketPath("tcp://127.0.0.1:0"), "");
  EXPECT_EQ(IpcSocketPath("zmq+tcp://127.0.0.1:0"), "");
}

TEST(DataPortErrorTest, RejectsEndpointsOfNoBackend) {
  EXPECT_FALSE(DataPort::Bind("udp://127.0.0.1:0").ok());
  EXPECT_FALSE(DataPort::Bind("zmq+bogus://x").ok());
  EXPECT_FALSE(DataChannel::Connect("tcp://127.0.0.1", 0.1).ok());
}

}  // namespace
}  // namespace lockstep
