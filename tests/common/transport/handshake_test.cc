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

RoleKeys KeysWithSecret(char fill, DataSecurity mode = DataSecurity::kAuth) {
  RoleKeys keys;
  keys.role = KeyRole::kWorker;
  keys.data_plane = mode;
  keys.data_secret.assign(kDataSecretBytes, fill);
  return keys;
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
Status ServeHandshake(int fd, const RoleKeys& keys, std::string* sent,
                      const std::string& replay = "",
                      SessionKeys* session = nullptr) {
  ServerHandshake server(keys);
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
  return Status::Ok();
}

// Both sides over a socket pair, the server's secret filled with 'k' and
// the client's with `client_fill`: (server's verdict, client's).
struct Verdicts {
  Status server, client;
  std::string sent;  // the client's proof
};
Verdicts HandshakeBetween(char client_fill, double timeout_s) {
  Pair pair;
  Verdicts v;
  std::thread t([&] {
    v.server = ServeHandshake(pair.fd[0], KeysWithSecret('k'), &v.sent);
  });
  v.client = ClientHandshake(pair.fd[1], KeysWithSecret(client_fill), timeout_s)
                 .status();
  t.join();
  return v;
}

TEST(HandshakeTest, BothSidesWithTheJobsKeyProveThemselves) {
  const auto [server, client, sent] = HandshakeBetween('k', 5);
  EXPECT_TRUE(server.ok()) << server.message();
  EXPECT_TRUE(client.ok()) << client.message();
  // The secret itself never crosses the wire.
  EXPECT_EQ(sent.find(std::string(8, 'k')), std::string::npos);
}

TEST(HandshakeTest, AClientWithAnotherKeyIsRefused) {
  const auto [server, client, sent] = HandshakeBetween('x', 1);
  EXPECT_EQ(server.code(), StatusCode::kFailedPrecondition) << server.message();
  EXPECT_FALSE(client.ok());
}

TEST(HandshakeTest, AServerWithAnotherKeyIsNotBelieved) {
  Pair pair;
  std::string sent;
  Status server;
  RoleKeys impostor = KeysWithSecret('x');
  // The impostor answers as if the proof were fine: it cannot make its own.
  std::thread t([&] {
    ServerHandshake fake(impostor);
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
  Status client = ClientHandshake(pair.fd[1], KeysWithSecret('k'), 5).status();
  t.join();
  EXPECT_EQ(client.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(client.message().find("does not hold the job's data key"),
            std::string::npos);
}

// A proof recorded from one connection is refused on another: each server
// hello carries a fresh nonce.
TEST(HandshakeTest, AReplayedProofIsRefused) {
  std::string recorded;
  {
    Pair pair;
    Status server;
    std::thread t([&] {
      server = ServeHandshake(pair.fd[0], KeysWithSecret('k'), &recorded);
    });
    ASSERT_TRUE(ClientHandshake(pair.fd[1], KeysWithSecret('k'), 5).ok());
    t.join();
    ASSERT_TRUE(server.ok());
  }
  Pair pair;
  std::string sent;
  Status replayed =
      ServeHandshake(pair.fd[0], KeysWithSecret('k'), &sent, recorded);
  EXPECT_EQ(replayed.code(), StatusCode::kFailedPrecondition)
      << replayed.message();
}

TEST(HandshakeTest, BytesThatAreNotAHandshakeAreRefused) {
  ServerHandshake server(KeysWithSecret('k'));
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
      ClientHandshake(pair.fd[1], KeysWithSecret('k'), 0.2).status();
  EXPECT_EQ(client.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(client.message().find("--security off"), std::string::npos)
      << client.message();
}

// aead: both ends derive the same two record keys, different for each
// direction and for each connection; auth derives none.
TEST(HandshakeTest, AeadGivesBothEndsTheSameKeysOfThisConnectionOnly) {
  std::vector<SessionKeys> servers, clients;
  for (int connection = 0; connection < 2; ++connection) {
    Pair pair;
    std::string sent;
    SessionKeys server;
    Status served;
    std::thread t([&] {
      served =
          ServeHandshake(pair.fd[0], KeysWithSecret('k', DataSecurity::kAead),
                         &sent, "", &server);
    });
    auto client = ClientHandshake(pair.fd[1],
                                  KeysWithSecret('k', DataSecurity::kAead), 5);
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
  std::thread t([&] {
    (void)ServeHandshake(pair.fd[0], KeysWithSecret('k', DataSecurity::kAuth),
                         &sent);
  });
  auto client =
      ClientHandshake(pair.fd[1], KeysWithSecret('k', DataSecurity::kAead), 1);
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
