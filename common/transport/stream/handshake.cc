#include "common/transport/stream/handshake.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
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

std::string Mac(const std::string& secret, const char* label,
                const std::string& hello, const char* client_nonce) {
  // The label's terminating NUL goes in too: no label is a prefix of
  // another's input, so a proof and a record key never share one.
  std::string input(label, std::strlen(label) + 1);
  input += hello;
  input.append(client_nonce, kHandshakeNonceBytes);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), out,
       &size);
  return std::string(reinterpret_cast<char*>(out), size);
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
                    const std::string& hello, const char* client_nonce) {
  SessionKeys keys;
  keys.mode = mode;
  if (mode == DataSecurity::kAead) {
    keys.client_to_server =
        Mac(secret, "lockstep client to server", hello, client_nonce);
    keys.server_to_client =
        Mac(secret, "lockstep server to client", hello, client_nonce);
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

ServerHandshake::~ServerHandshake() { Wipe(secret_); }

ServerHandshake::ServerHandshake(const RoleKeys& keys)
    : mode_(keys.data_plane), secret_(keys.data_secret) {
  const uint32_t head[2] = {kHandshakeMagic, ModeWord(mode_)};
  hello_.assign(reinterpret_cast<const char*>(head), sizeof(head));
  hello_ += Nonce();
}

StatusOr<std::string> ServerHandshake::Finish() const {
  uint32_t magic = 0;
  std::memcpy(&magic, reply_.data(), sizeof(magic));
  if (magic != kHandshakeMagic) {
    return InvalidArgument("the peer did not answer the handshake");
  }
  const char* nonce = reply_.data() + 4;
  const std::string expected = Mac(secret_, "lockstep client", hello_, nonce);
  if (!SameBytes(expected.data(), nonce + kHandshakeNonceBytes,
                 kHandshakeMacBytes)) {
    return FailedPrecondition("the peer does not hold the job's data key");
  }
  return Mac(secret_, "lockstep server", hello_, nonce);
}

SessionKeys ServerHandshake::session_keys() const {
  return KeysFor(mode_, secret_, hello_, reply_.data() + 4);
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

StatusOr<SessionKeys> ClientHandshake(int fd, const RoleKeys& keys,
                                      double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::duration<double>(timeout_s));
  auto receive = [](int f, char* p, size_t n) { return recv(f, p, n, 0); };
  auto send_all = [](int f, char* p, size_t n) {
    return send(f, p, n, MSG_NOSIGNAL);
  };
  std::string hello(kServerHelloBytes, '\0');
  LS_RETURN_IF_ERROR(
      Exactly(fd, hello.data(), hello.size(), POLLIN, deadline, receive));
  uint32_t head[2];
  std::memcpy(head, hello.data(), sizeof(head));
  if (head[0] != kHandshakeMagic) {
    return FailedPrecondition(
        "the server does not authenticate (is it running with "
        "--security off?)");
  }
  if (head[1] != ModeWord(keys.data_plane)) {
    // One job's keys name one mode: another is another job (or a build
    // that speaks a mode this one does not).
    return FailedPrecondition("the server's data plane is mode " +
                              std::to_string(head[1]) + ", not this worker's " +
                              DataSecurityName(keys.data_plane) +
                              " (are both running with the same job's keys?)");
  }
  const std::string nonce = Nonce();
  std::string proof(reinterpret_cast<const char*>(&kHandshakeMagic), 4);
  proof += nonce;
  proof += Mac(keys.data_secret, "lockstep client", hello, nonce.data());
  LS_RETURN_IF_ERROR(
      Exactly(fd, proof.data(), proof.size(), POLLOUT, deadline, send_all));
  std::string answer(kHandshakeMacBytes, '\0');
  LS_RETURN_IF_ERROR(
      Exactly(fd, answer.data(), answer.size(), POLLIN, deadline, receive));
  const std::string expected =
      Mac(keys.data_secret, "lockstep server", hello, nonce.data());
  if (!SameBytes(expected.data(), answer.data(), kHandshakeMacBytes)) {
    return FailedPrecondition(
        "the server at the other end does not hold the job's data key");
  }
  return KeysFor(keys.data_plane, keys.data_secret, hello, nonce.data());
}

}  // namespace lockstep
