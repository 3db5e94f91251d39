#include "common/transport/stream/handshake.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace lockstep {
namespace {

constexpr uint32_t kModeAuth = 1;
constexpr uint32_t kModeAead = 2;

uint32_t ModeWord(DataSecurity mode) {
  return mode == DataSecurity::kAead ? kModeAead : kModeAuth;
}

// `client`: the client's ticket and nonce, as sent.
std::string Mac(const std::string& secret, const char* label,
                const std::string& hello, const char* client) {
  // The label's terminating NUL goes in too: no label is a prefix of
  // another's input, so a proof and a record key never share one.
  std::string input(label, std::strlen(label) + 1);
  input += hello;
  input.append(client, kTicketBytes + kHandshakeNonceBytes);
  return HmacSha256(secret, input);
}

std::string Nonce() {
  std::string nonce(kHandshakeNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()),
                 static_cast<int>(nonce.size())) != 1) {
    // OpenSSL's generator failing is not something to run on without.
    std::abort();
  }
  return nonce;
}

void Wipe(std::string& secret) {
  OPENSSL_cleanse(secret.data(), secret.size());
}

SessionKeys KeysFor(DataSecurity mode, const std::string& secret,
                    const std::string& hello, const char* client) {
  SessionKeys keys;
  keys.mode = mode;
  if (mode == DataSecurity::kAead) {
    keys.client_to_server =
        Mac(secret, "lockstep client to server", hello, client);
    keys.server_to_client =
        Mac(secret, "lockstep server to client", hello, client);
  }
  return keys;
}

bool SameBytes(const char* a, const char* b, size_t n) {
  return CRYPTO_memcmp(a, b, n) == 0;
}

// Moves exactly `size` bytes through `fd` (send or receive) before
// `deadline`.
template <typename Io>
Status Exactly(int fd, char* data, size_t size, short event,
               std::chrono::steady_clock::time_point deadline, Io io) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = io(fd, data + done, size - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return Unavailable("the server closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return Unavailable(std::string("handshake: ") + std::strerror(errno));
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return DeadlineExceeded(
          "the server did not finish the handshake (is it running with "
          "--security off?)");
    }
    pollfd p{fd, event, 0};
    poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
  }
  return Status::Ok();
}

}  // namespace

SessionKeys::~SessionKeys() {
  Wipe(client_to_server);
  Wipe(server_to_client);
}

ServerHandshake::~ServerHandshake() {
  Wipe(ticket_key_);
  Wipe(peer_.secret);
}

ServerHandshake::ServerHandshake(DataSecurity mode,
                                 const std::string& ticket_key)
    : mode_(mode), ticket_key_(ticket_key) {
  const uint32_t head[2] = {kHandshakeMagic, ModeWord(mode_)};
  hello_.assign(reinterpret_cast<const char*>(head), sizeof(head));
  hello_ += Nonce();
}

StatusOr<std::string> ServerHandshake::Finish() {
  uint32_t magic = 0;
  std::memcpy(&magic, reply_.data(), sizeof(magic));
  if (magic != kHandshakeMagic) {
    return InvalidArgument(
        "the peer did not answer the handshake (a build of another "
        "version?)");
  }
  const char* client = reply_.data() + 4;
  LS_ASSIGN_OR_RETURN(peer_,
                      PeerTicket::Decode(std::string(client, kTicketBytes)));
  peer_.secret = TicketSecret(ticket_key_, peer_);
  const std::string expected =
      Mac(peer_.secret, "lockstep client", hello_, client);
  if (!SameBytes(expected.data(), client + kTicketBytes + kHandshakeNonceBytes,
                 kHandshakeMacBytes)) {
    return FailedPrecondition(std::string("the peer does not hold the ") +
                              TicketRoleName(peer_.role) + " " +
                              std::to_string(peer_.rank) +
                              " ticket it presents");
  }
  return Mac(peer_.secret, "lockstep server", hello_, client);
}

SessionKeys ServerHandshake::session_keys() const {
  return KeysFor(mode_, peer_.secret, hello_, reply_.data() + 4);
}

StatusOr<RecordCiphers> CiphersFor(const SessionKeys& session,
                                   HandshakeSide side) {
  const bool server = side == HandshakeSide::kServer;
  RecordCiphers ciphers;
  LS_ASSIGN_OR_RETURN(ciphers.seal,
                      RecordCipher::Create(server ? session.server_to_client
                                                  : session.client_to_server,
                                           RecordCipher::Direction::kSeal));
  LS_ASSIGN_OR_RETURN(ciphers.open,
                      RecordCipher::Create(server ? session.client_to_server
                                                  : session.server_to_client,
                                           RecordCipher::Direction::kOpen));
  return ciphers;
}

StatusOr<SessionKeys> ClientHandshake(int fd, DataSecurity mode,
                                      const PeerTicket& ticket,
                                      double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::duration<double>(timeout_s));
  auto receive = [](int f, char* p, size_t n) { return recv(f, p, n, 0); };
  auto send_all = [](int f, char* p, size_t n) {
    return send(f, p, n, MSG_NOSIGNAL);
  };
  std::string hello(kServerHelloBytes, '\0');
  // Closed before the hello: the server had no room for another handshake
  // (Unavailable: try again). Closed later: it refused this ticket.
  LS_RETURN_IF_ERROR(
      Exactly(fd, hello.data(), hello.size(), POLLIN, deadline, receive));
  uint32_t head[2];
  std::memcpy(head, hello.data(), sizeof(head));
  if (head[0] != kHandshakeMagic) {
    return FailedPrecondition(
        "the server does not authenticate this version's way (is it running "
        "with --security off, or a build of another version?)");
  }
  if (head[1] != ModeWord(mode)) {
    // One job's keys name one mode: another is another job (or a build
    // that speaks a mode this one does not).
    return FailedPrecondition("the server's data plane is mode " +
                              std::to_string(head[1]) + ", not this worker's " +
                              DataSecurityName(mode) +
                              " (are both running with the same job's keys?)");
  }
  // The ticket and nonce, as the proofs cover them.
  std::string client = ticket.Encode() + Nonce();
  std::string proof(reinterpret_cast<const char*>(&kHandshakeMagic), 4);
  proof += client;
  proof += Mac(ticket.secret, "lockstep client", hello, client.data());
  LS_RETURN_IF_ERROR(
      Exactly(fd, proof.data(), proof.size(), POLLOUT, deadline, send_all));
  std::string answer(kHandshakeMacBytes, '\0');
  const Status answered =
      Exactly(fd, answer.data(), answer.size(), POLLIN, deadline, receive);
  if (answered.code() == StatusCode::kUnavailable) {
    return FailedPrecondition(answered.message() +
                              " after this worker's proof: it refused the "
                              "ticket");
  }
  LS_RETURN_IF_ERROR(answered);
  const std::string expected =
      Mac(ticket.secret, "lockstep server", hello, client.data());
  if (!SameBytes(expected.data(), answer.data(), kHandshakeMacBytes)) {
    return FailedPrecondition(
        "the server at the other end does not hold the job's ticket key "
        "(or this ticket is not the job's)");
  }
  return KeysFor(mode, ticket.secret, hello, client.data());
}

}  // namespace lockstep
