// The direct transport's mutual authentication: before a connection
// carries a single Lockstep message, the worker and the server each prove
// they hold the job's data secret (job_keys.h), without sending it.
//
//   server -> client  hello: u32 "LSA1" | u32 mode (1 auth, 2 aead) |
//                     32-byte nonce
//   client -> server  u32 "LSA1" | 32-byte nonce | HMAC-SHA256(K, "lockstep
//                     client\0" | hello | client nonce)
//   server -> client  HMAC-SHA256(K, "lockstep server\0" | hello | client
//                     nonce)
//
// Fresh nonces on both sides: a proof captured from one connection is
// worth nothing on another, so a replayed handshake (or a replayed frame
// on a connection that never authenticated) is refused. The mode is inside
// both proofs: nobody in between can change it, and a client refuses a
// mode other than its own keys'. The client sends nothing of the job
// before the server has proved itself. `auth` authenticates the
// connection only; `aead` then seals every record (record_cipher.h) under
// two keys of this connection alone, HMAC-SHA256(K, "lockstep client to
// server\0" | hello | client nonce) and the same with "server to client".
// Each label ends in its NUL, so no label is a prefix of another's input.
// Thread-safety: a ServerHandshake belongs to its connection's thread.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_HANDSHAKE_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_HANDSHAKE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "common/security/job_keys.h"
#include "common/status.h"
#include "common/transport/stream/record_cipher.h"

namespace lockstep {

// What a finished handshake leaves the connection: its mode and, for
// aead, the record keys of each direction (kRecordKeyBytes each).
struct SessionKeys {
  DataSecurity mode = DataSecurity::kAuth;
  std::string client_to_server;
  std::string server_to_client;

  SessionKeys() = default;
  SessionKeys(const SessionKeys&) = default;
  SessionKeys& operator=(const SessionKeys&) = default;
  SessionKeys(SessionKeys&&) = default;
  SessionKeys& operator=(SessionKeys&&) = default;
  // Wiped when dropped: the record ciphers hold their own copies.
  ~SessionKeys();
};

inline constexpr uint32_t kHandshakeMagic = 0x3141534c;  // "LSA1"
inline constexpr size_t kHandshakeNonceBytes = 32;
inline constexpr size_t kHandshakeMacBytes = 32;
inline constexpr size_t kServerHelloBytes = 8 + kHandshakeNonceBytes;
inline constexpr size_t kClientProofBytes =
    4 + kHandshakeNonceBytes + kHandshakeMacBytes;

// The server's side of one connection's handshake, fed by non-blocking
// reads.
class ServerHandshake {
 public:
  // REQUIRES: keys.data_secret holds kDataSecretBytes bytes.
  explicit ServerHandshake(const RoleKeys& keys);
  // Wipes its copy of the data secret.
  ~ServerHandshake();
  ServerHandshake(const ServerHandshake&) = delete;
  ServerHandshake& operator=(const ServerHandshake&) = delete;
  ServerHandshake(ServerHandshake&&) = delete;
  ServerHandshake& operator=(ServerHandshake&&) = delete;

  // Sent as the connection is accepted.
  const std::string& hello() const { return hello_; }
  // Where the next bytes of the client's proof go, and how many are still
  // wanted (0: Finish).
  char* into() { return reply_.data() + received_; }
  size_t wanted() const { return reply_.size() - received_; }
  void Received(size_t n) { received_ += n; }

  // Checks the client's proof; returns the server's, to send. Errors: not
  // a handshake, or a proof made without the job's data secret.
  StatusOr<std::string> Finish() const;
  // The connection's keys. REQUIRES: Finish succeeded.
  SessionKeys session_keys() const;

 private:
  DataSecurity mode_;
  std::string secret_;
  std::string hello_;
  std::array<char, kClientProofBytes> reply_{};
  size_t received_ = 0;
};

// One end's record ciphers of an aead connection: what it seals its
// records with and what it opens its peer's with.
struct RecordCiphers {
  std::unique_ptr<RecordCipher> seal;
  std::unique_ptr<RecordCipher> open;
};
enum class HandshakeSide { kServer, kClient };
// REQUIRES: session.mode is kAead. Errors: a key OpenSSL refuses.
StatusOr<RecordCiphers> CiphersFor(const SessionKeys& session,
                                   HandshakeSide side);

// The client's side on a connected, non-blocking `fd`: waits (at most
// timeout_s) for the server's hello, proves itself, and checks the
// server's proof. Errors: the server is not the job's (a wrong proof, a
// stream that is not a handshake), it asks for another mode than `keys`
// name, it closed the connection, or timed out.
StatusOr<SessionKeys> ClientHandshake(int fd, const RoleKeys& keys,
                                      double timeout_s);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_HANDSHAKE_H_
