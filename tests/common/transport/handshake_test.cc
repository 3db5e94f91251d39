#include "common/transport/stream/handshake.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "common/transport/stream/record_cipher.h"

namespace lockstep {
namespace {

// The job's ticket key, filled with `fill` (the handshake takes it as
// given: peer_ticket_test checks how it is computed).
std::string TicketKeyOf(char fill) { return std::string(32, fill); }

// Worker `rank`'s ticket under the ticket key filled with `fill`.
PeerTicket TicketOf(int32_t rank, char fill = 'k') {
  PeerTicket ticket;
  ticket.rank = rank;
  ticket.incarnation = 7;
  ticket.secret = TicketSecret(TicketKeyOf(fill), ticket);
  return ticket;
}

// A connected pair of non-blocking stream sockets.
struct Pair {
  Pair() {
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
    for (int f : fd) fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK);
  }
  ~Pair() {
    for (int f : fd) close(f);
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
  int fd[2];
};

// The server's side as StreamDataPort drives it, blocking here for
// brevity. Returns the server's verdict; `sent` gets the client's proof,
// `session` (if given) the connection's keys.
Status ServeHandshake(int fd, DataSecurity mode, std::string* sent,
                      const std::string& replay = "",
                      SessionKeys* session = nullptr,
                      PeerTicket* peer = nullptr) {
  ServerHandshake server(mode, TicketKeyOf('k'));
  if (send(fd, server.hello().data(), server.hello().size(), 0) !=
      static_cast<ssize_t>(server.hello().size())) {
    return Unavailable("hello not sent");
  }
  if (!replay.empty()) {
    // An attacker's stored proof, instead of what the client sends.
    std::memcpy(server.into(), replay.data(), replay.size());
    server.Received(replay.size());
  }
  for (int i = 0; i < 500 && server.wanted() > 0; ++i) {
    const ssize_t n = recv(fd, server.into(), server.wanted(), 0);
    if (n > 0) server.Received(static_cast<size_t>(n));
    if (n == 0) return Unavailable("closed");
    if (n < 0) usleep(2000);
  }
  if (server.wanted() > 0) return DeadlineExceeded("no proof");
  *sent = std::string(server.into() - kClientProofBytes, kClientProofBytes);
  LS_ASSIGN_OR_RETURN(std::string proof, server.Finish());
  (void)send(fd, proof.data(), proof.size(), 0);
  if (session != nullptr) *session = server.session_keys();
  if (peer != nullptr) *peer = server.peer();
  return Status::Ok();
}

// Both sides over a socket pair, the server with the job's ticket key and
// the client proving `ticket`: (server's verdict, client's).
struct Verdicts {
  Status server, client;
  std::string sent;  // the client's proof
  PeerTicket peer;   // whom the server took the client for
};
Verdicts HandshakeWith(const PeerTicket& ticket, double timeout_s) {
  Pair pair;
  Verdicts v;
  std::thread t([&] {
    v.server = ServeHandshake(pair.fd[0], DataSecurity::kAuth, &v.sent, "",
                              nullptr, &v.peer);
  });
  v.client = ClientHandshake(pair.fd[1], DataSecurity::kAuth, ticket, timeout_s)
                 .status();
  t.join();
  return v;
}

TEST(HandshakeTest, TheServerLearnsWhichWorkerProvedItself) {
  const Verdicts v = HandshakeWith(TicketOf(3), 5);
  EXPECT_TRUE(v.server.ok()) << v.server.message();
  EXPECT_TRUE(v.client.ok()) << v.client.message();
  EXPECT_EQ(v.peer.role, TicketRole::kWorker);
  EXPECT_EQ(v.peer.rank, 3);
  EXPECT_EQ(v.peer.incarnation, 7u);
  // The ticket's secret never crosses the wire.
  EXPECT_EQ(v.sent.find(TicketOf(3).secret), std::string::npos);
}

TEST(HandshakeTest, ATicketOfAnotherJobIsRefused) {
  const Verdicts v = HandshakeWith(TicketOf(0, 'x'), 1);
  EXPECT_EQ(v.server.code(), StatusCode::kFailedPrecondition)
      << v.server.message();
  EXPECT_FALSE(v.client.ok());
}

// A worker holding its own ticket claims another rank with it: the secret
// is of rank 0's ticket, so rank 1's proof fails.
TEST(HandshakeTest, AWorkerCannotProveAnotherRanksTicket) {
  PeerTicket forged = TicketOf(0);
  forged.rank = 1;
  const Verdicts v = HandshakeWith(forged, 1);
  EXPECT_EQ(v.server.code(), StatusCode::kFailedPrecondition)
      << v.server.message();
  EXPECT_NE(v.server.message().find("worker 1 ticket"), std::string::npos)
      << v.server.message();
  EXPECT_FALSE(v.client.ok());
  // Nor a server's, with any secret it holds.
  PeerTicket server = TicketOf(0);
  server.role = TicketRole::kServer;
  EXPECT_EQ(HandshakeWith(server, 1).server.code(),
            StatusCode::kFailedPrecondition);
}

TEST(HandshakeTest, AServerWithoutTheTicketKeyIsNotBelieved) {
  Pair pair;
  // The impostor answers as if the proof were fine: it cannot make its own.
  std::thread t([&] {
    ServerHandshake fake(DataSecurity::kAuth, TicketKeyOf('x'));
    (void)send(pair.fd[0], fake.hello().data(), fake.hello().size(), 0);
    char proof[kClientProofBytes];
    size_t got = 0;
    for (int i = 0; i < 500 && got < sizeof(proof); ++i) {
      const ssize_t n = recv(pair.fd[0], proof + got, sizeof(proof) - got, 0);
      if (n > 0) got += static_cast<size_t>(n);
      if (n < 0) usleep(2000);
    }
    const std::string answer(kHandshakeMacBytes, 'a');
    (void)send(pair.fd[0], answer.data(), answer.size(), 0);
  });
  Status client =
      ClientHandshake(pair.fd[1], DataSecurity::kAuth, TicketOf(0), 5).status();
  t.join();
  EXPECT_EQ(client.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(client.message().find("does not hold the job's ticket key"),
            std::string::npos)
      << client.message();
}

// A proof recorded from one connection is refused on another: each server
// hello carries a fresh nonce.
TEST(HandshakeTest, AReplayedProofIsRefused) {
  std::string recorded;
  {
    Pair pair;
    Status server;
    std::thread t([&] {
      server = ServeHandshake(pair.fd[0], DataSecurity::kAuth, &recorded);
    });
    ASSERT_TRUE(
        ClientHandshake(pair.fd[1], DataSecurity::kAuth, TicketOf(0), 5).ok());
    t.join();
    ASSERT_TRUE(server.ok());
  }
  Pair pair;
  std::string sent;
  Status replayed =
      ServeHandshake(pair.fd[0], DataSecurity::kAuth, &sent, recorded);
  EXPECT_EQ(replayed.code(), StatusCode::kFailedPrecondition)
      << replayed.message();
}

TEST(HandshakeTest, BytesThatAreNotAHandshakeAreRefused) {
  ServerHandshake server(DataSecurity::kAuth, TicketKeyOf('k'));
  const std::string junk(kClientProofBytes, 'G');
  std::memcpy(server.into(), junk.data(), junk.size());
  server.Received(junk.size());
  auto proof = server.Finish();
  ASSERT_FALSE(proof.ok());
  EXPECT_NE(proof.status().message().find("did not answer the handshake"),
            std::string::npos);
}

TEST(HandshakeTest, AClientOfAServerThatSaysNothingGivesUpInTime) {
  Pair pair;
  Status client =
      ClientHandshake(pair.fd[1], DataSecurity::kAuth, TicketOf(0), 0.2)
          .status();
  EXPECT_EQ(client.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(client.message().find("--security off"), std::string::npos)
      << client.message();
}

// aead: both ends derive the same two record keys, different for each
// direction and for each connection; auth derives none. The keys come
// from the ticket's secret: another worker cannot compute them.
TEST(HandshakeTest, AeadGivesBothEndsTheSameKeysOfThisConnectionOnly) {
  std::vector<SessionKeys> servers, clients;
  for (int connection = 0; connection < 2; ++connection) {
    Pair pair;
    std::string sent;
    SessionKeys server;
    Status served;
    std::thread t([&] {
      served =
          ServeHandshake(pair.fd[0], DataSecurity::kAead, &sent, "", &server);
    });
    auto client = ClientHandshake(pair.fd[1], DataSecurity::kAead,
                                  TicketOf(connection), 5);
    t.join();
    ASSERT_TRUE(served.ok()) << served.message();
    ASSERT_TRUE(client.ok()) << client.status().message();
    servers.push_back(server);
    clients.push_back(*client);
  }
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(clients[i].mode, DataSecurity::kAead);
    EXPECT_EQ(clients[i].client_to_server.size(), kRecordKeyBytes);
    EXPECT_EQ(clients[i].client_to_server, servers[i].client_to_server);
    EXPECT_EQ(clients[i].server_to_client, servers[i].server_to_client);
    EXPECT_NE(clients[i].client_to_server, clients[i].server_to_client);
  }
  EXPECT_NE(clients[0].client_to_server, clients[1].client_to_server);
  EXPECT_NE(clients[0].server_to_client, clients[1].server_to_client);
}

// A client refuses a server whose mode is not its keys' (it would send in
// the clear what it means to seal, or the other way round).
TEST(HandshakeTest, AClientRefusesAServerOfAnotherMode) {
  Pair pair;
  std::string sent;
  std::thread t(
      [&] { (void)ServeHandshake(pair.fd[0], DataSecurity::kAuth, &sent); });
  auto client =
      ClientHandshake(pair.fd[1], DataSecurity::kAead, TicketOf(0), 1);
  shutdown(pair.fd[1], SHUT_RDWR);
  t.join();
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("not this worker's aead"),
            std::string::npos)
      << client.status().message();
  // Nothing of the client's proof was sent.
  EXPECT_TRUE(sent.empty());
}

}  // namespace
}  // namespace lockstep
