// The direct transport's mutual authentication: before a connection
// carries a single Lockstep message, the client proves which peer it is -
// the ticket it was given (common/security/peer_ticket.h) - and the server
// proves it holds the job's ticket key, each without sending a secret.
//
//   server -> client  hello: u32 "LSA2" | u32 mode (1 auth, 2 aead) |
//                     32-byte nonce
//   client -> server  u32 "LSA2" | 12-byte ticket | 32-byte nonce |
//                     HMAC-SHA256(S, "lockstep client\0" | hello | ticket |
//                     client nonce)
//   server -> client  HMAC-SHA256(S, "lockstep server\0" | hello | ticket |
//                     client nonce)
//
// S is the ticket's secret: the client was given it; the server computes
// it from the ticket under the ticket key, which only servers and the
// coordinator hold. A worker therefore proves only its own ticket, and
// the connection is that ticket's peer for its life: a shard takes the
// sender's role and rank from it. Fresh nonces on both sides: a proof
// captured from one connection is worth nothing on another, so a replayed
// handshake (or a replayed frame on a connection that never
// authenticated) is refused. The mode is inside both proofs: nobody in
// between can change it, and a client refuses a mode other than its own
// keys'. The client sends nothing of the job before the server has proved
// itself. `auth` authenticates the connection only; `aead` then seals
// every record (record_cipher.h) under two keys of this connection alone,
// HMAC-SHA256(S, "lockstep client to server\0" | hello | ticket | client
// nonce) and the same with "server to client": another worker, not
// holding S, cannot compute them. Each label ends in its NUL, so no label
// is a prefix of another's input.
// Thread-safety: a ServerHandshake belongs to its connection's thread.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_HANDSHAKE_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_HANDSHAKE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "common/security/job_keys.h"
#include "common/security/peer_ticket.h"
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

inline constexpr uint32_t kHandshakeMagic = 0x3241534c;  // "LSA2"
inline constexpr size_t kHandshakeNonceBytes = 32;
inline constexpr size_t kHandshakeMacBytes = 32;
inline constexpr size_t kServerHelloBytes = 8 + kHandshakeNonceBytes;
inline constexpr size_t kClientProofBytes =
    4 + kTicketBytes + kHandshakeNonceBytes + kHandshakeMacBytes;

// The server's side of one connection's handshake, fed by non-blocking
// reads.
class ServerHandshake {
 public:
  // `ticket_key`: the job's (TicketKey).
  ServerHandshake(DataSecurity mode, const std::string& ticket_key);
  // Wipes its copies of the keys.
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

  // Checks the client's ticket and proof; returns the server's, to send.
  // Errors: not a handshake, a malformed ticket, or a proof made without
  // the ticket's secret.
  StatusOr<std::string> Finish();
  // The connection's peer and keys. REQUIRES: Finish succeeded.
  const PeerTicket& peer() const { return peer_; }
  SessionKeys session_keys() const;

 private:
  DataSecurity mode_;
  std::string ticket_key_;
  PeerTicket peer_;  // its secret: S, once Finish has read the ticket
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
// timeout_s) for the server's hello, proves `ticket`, and checks the
// server's proof. Errors: Unavailable when the server closed the
// connection before its hello (it had no room for another handshake: try
// again); FailedPrecondition when the server is not the job's (a wrong
// proof, a stream that is not a handshake), it asks for another mode than
// `mode`, or it closed the connection after the proof (it refused the
// ticket); DeadlineExceeded when it timed out.
StatusOr<SessionKeys> ClientHandshake(int fd, DataSecurity mode,
                                      const PeerTicket& ticket,
                                      double timeout_s);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_HANDSHAKE_H_
