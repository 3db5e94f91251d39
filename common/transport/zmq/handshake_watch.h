// What ZeroMQ's socket monitor says of a socket's connections, so that no
// refusal is silent: ZeroMQ itself retries a refused TCP connect, and drops
// a connection whose CurveZMQ handshake fails, without a word to the
// application.
// - On a connecting socket (a role's link to the coordinator, a tool's):
//   a handshake the peer refused - the ZAP handler denied this process's
//   key, or the peer could not read its handshake (the key file is
//   another job's, whose coordinator key it names: the peer breaks off
//   every handshake) - is an error (Refusal), naming what to check; a
//   peer nothing answers for
//   (connection refused, retried) is warned about after a few seconds and
//   every minute after, naming the endpoint.
// - On a listening socket (the coordinator's): every failed handshake is
//   counted and logged (a few, then every 100th), since ZeroMQ hands the
//   application none of them.
// Thread-safety: not thread-safe; it belongs to the thread that owns the
// watched socket.
#ifndef LOCKSTEP_COMMON_TRANSPORT_ZMQ_HANDSHAKE_WATCH_H_
#define LOCKSTEP_COMMON_TRANSPORT_ZMQ_HANDSHAKE_WATCH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "common/status.h"

namespace lockstep {

class HandshakeWatch {
 public:
  // How long a connecting socket may find nothing at its endpoint before
  // it says so; then once a minute.
  static constexpr int64_t kUnreachableWarnMs = 3000;
  static constexpr int64_t kUnreachableRepeatMs = 60000;

  // Watches `socket`, which connects to (or, `listening`, binds) `endpoint`;
  // `peer` names the other side in messages ("the coordinator").
  // REQUIRES: the socket outlives the watch (declare the watch after the
  // socket): the watch stops the monitor when it goes.
  static StatusOr<std::unique_ptr<HandshakeWatch>> Attach(zmq::socket_t& socket,
                                                          std::string peer,
                                                          std::string endpoint,
                                                          bool listening);
  ~HandshakeWatch();
  HandshakeWatch(const HandshakeWatch&) = delete;
  HandshakeWatch& operator=(const HandshakeWatch&) = delete;

  // Takes the events the monitor queued (never blocks) and says what they
  // mean (the warnings above, logged).
  void Poll();
  // Stops watching (a connecting socket once its peer took it: the events
  // of a later reconnect would queue unread, and ZeroMQ's I/O thread
  // blocks on a full monitor queue). Idempotent.
  void Stop();
  // A connecting socket's peer refused its handshake: FailedPrecondition
  // saying what to check; OK otherwise (also while nothing answers: the
  // peer may be starting).
  Status Refusal() const { return refusal_; }
  // Handshakes that failed (a listening socket: peers refused or unable to
  // speak CurveZMQ with it; a connecting one: its own attempts).
  uint64_t failed_handshakes() const { return failed_handshakes_; }
  // A handshake succeeded (with CurveZMQ: the peer took this key), or,
  // without CurveZMQ, a connection was made.
  bool connected() const { return handshakes_ > 0 || connects_ > 0; }

 private:
  HandshakeWatch(void* watched, zmq::socket_t monitor, std::string peer,
                 std::string endpoint, bool listening);
  void Handle(uint16_t event, int32_t value);
  void HandshakeFailed(uint16_t event, int32_t value);
  void WarnIfUnreachable();

  void* const watched_;  // the watched socket's handle
  bool stopped_ = false;
  zmq::socket_t monitor_;
  const std::string peer_;
  const std::string endpoint_;
  const bool listening_;
  Status refusal_;
  uint64_t failed_handshakes_ = 0;
  uint64_t failed_in_a_row_ = 0;
  uint64_t handshakes_ = 0;
  uint64_t connects_ = 0;
  uint64_t retries_ = 0;
  int64_t first_retry_ms_ = 0;
  int64_t warned_ms_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_ZMQ_HANDSHAKE_WATCH_H_
