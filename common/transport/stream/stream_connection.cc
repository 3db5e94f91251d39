#include "common/transport/stream/stream_connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "common/transport/transport_keys.h"

namespace lockstep {

StreamConnection::~StreamConnection() { close(fd_); }

bool StreamConnection::Greet(const PortKeys* keys, double now_s) {
  if (keys == nullptr) return true;
  handshake_ = std::make_unique<ServerHandshake>(keys->mode, keys->ticket_key);
  greeted_s_ = now_s;
  deadline_s_ = now_s + kHandshakeDeadlineMs / 1000.0;
  // A fresh socket's send buffer takes the few bytes at once.
  const std::string& hello = handshake_->hello();
  return send(fd_, hello.data(), hello.size(), MSG_NOSIGNAL) ==
         static_cast<ssize_t>(hello.size());
}

StreamConnection::Proof StreamConnection::Authenticate(std::string* reason) {
  while (handshake_->wanted() > 0) {
    const ssize_t n = recv(fd_, handshake_->into(), handshake_->wanted(), 0);
    if (n > 0) {
      handshake_->Received(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Proof::kPending;
    }
    return Proof::kGone;  // closed before proving anything
  }
  auto proof = handshake_->Finish();
  if (!proof.ok()) {
    *reason = proof.status().message();
    return Proof::kRefused;
  }
  if (send(fd_, proof->data(), proof->size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(proof->size())) {
    *reason = "it left";
    return Proof::kRefused;
  }
  const SessionKeys session = handshake_->session_keys();
  peer_ = handshake_->peer();
  peer_->secret.clear();  // the handshake wipes its own copy
  handshake_.reset();
  if (session.mode == DataSecurity::kAead) {
    if (Status sealed = Seal(session); !sealed.ok()) {
      *reason = sealed.message();
      return Proof::kRefused;
    }
  }
  return Proof::kProven;
}

Status StreamConnection::Seal(const SessionKeys& session) {
  LS_ASSIGN_OR_RETURN(RecordCiphers ciphers,
                      CiphersFor(session, HandshakeSide::kServer));
  reader_.Open(std::move(ciphers.open));
  writer_.Seal(std::move(ciphers.seal));
  return Status::Ok();
}

}  // namespace lockstep
