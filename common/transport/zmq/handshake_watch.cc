#include "common/transport/zmq/handshake_watch.h"

#include <atomic>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {
namespace {

constexpr int kEvents =
    ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_RETRIED |
    ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
    ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

// Listening sockets log their first few failed handshakes, then every
// 100th: a scanner must not flood the log.
constexpr uint64_t kLoggedFailures = 5;
// Handshakes that break off, in a row with none that succeeded, before a
// connecting socket takes its peer for one that refuses it.
constexpr uint64_t kBrokenHandshakes = 3;

std::string MonitorAddress() {
  static std::atomic<uint64_t> next{0};
  return "inproc://lockstep-handshake-watch-" + std::to_string(++next);
}

}  // namespace

StatusOr<std::unique_ptr<HandshakeWatch>> HandshakeWatch::Attach(
    zmq::socket_t& socket, std::string peer, std::string endpoint,
    bool listening) {
  const std::string address = MonitorAddress();
  if (zmq_socket_monitor(socket.handle(), address.c_str(), kEvents) != 0) {
    return Internal("cannot watch the connection to " + endpoint + ": " +
                    zmq_strerror(zmq_errno()));
  }
  try {
    zmq::socket_t monitor(ProcessContext(), zmq::socket_type::pair);
    monitor.set(zmq::sockopt::linger, 0);
    monitor.connect(address);
    return std::unique_ptr<HandshakeWatch>(
        new HandshakeWatch(socket.handle(), std::move(monitor), std::move(peer),
                           std::move(endpoint), listening));
  } catch (const zmq::error_t& e) {
    return Internal("cannot watch the connection to " + endpoint + ": " +
                    e.what());
  }
}

HandshakeWatch::HandshakeWatch(void* watched, zmq::socket_t monitor,
                               std::string peer, std::string endpoint,
                               bool listening)
    : watched_(watched),
      monitor_(std::move(monitor)),
      peer_(std::move(peer)),
      endpoint_(std::move(endpoint)),
      listening_(listening) {}

HandshakeWatch::~HandshakeWatch() {
  // The monitor stops before its reader closes: ZeroMQ's I/O thread sends
  // the events, and one sent to a reader that is gone blocks that thread,
  // and with it every other socket it serves.
  Stop();
}

void HandshakeWatch::Stop() {
  if (stopped_) return;
  zmq_socket_monitor(watched_, nullptr, 0);
  stopped_ = true;
}

void HandshakeWatch::Poll() {
  while (true) {
    zmq::message_t event;
    zmq::message_t address;
    try {
      if (!monitor_.recv(event, zmq::recv_flags::dontwait)) break;
      if (!event.more() || !monitor_.recv(address)) break;
    } catch (const zmq::error_t&) {
      break;  // the watched socket closed: its monitor ends
    }
    if (event.size() < 6) continue;
    uint16_t id = 0;
    int32_t value = 0;
    std::memcpy(&id, event.data(), sizeof(id));
    std::memcpy(&value, static_cast<const char*>(event.data()) + 2,
                sizeof(value));
    Handle(id, value);
  }
  if (!listening_) WarnIfUnreachable();
}

void HandshakeWatch::Handle(uint16_t event, int32_t value) {
  switch (event) {
    case ZMQ_EVENT_CONNECTED:
      ++connects_;
      retries_ = 0;
      return;
    case ZMQ_EVENT_CONNECT_RETRIED:
      if (retries_++ == 0) first_retry_ms_ = NowMillis();
      return;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
      ++handshakes_;
      failed_in_a_row_ = 0;
      return;
    default:
      HandshakeFailed(event, value);
  }
}

void HandshakeWatch::HandshakeFailed(uint16_t event, int32_t value) {
  ++failed_handshakes_;
  ++failed_in_a_row_;
  std::string why;
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
    why = "its key is not one of the job's, or not of a role it takes (ZAP " +
          std::to_string(value) + ")";
  } else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
    why =
        "its CurveZMQ handshake did not verify: the two sides hold "
        "different jobs' keys (protocol error " +
        std::to_string(value) + ")";
  } else {
    why = std::string("the handshake broke off (") + zmq_strerror(value) +
          "): a peer without the job's keys, or not speaking CurveZMQ";
  }
  if (listening_) {
    if (failed_handshakes_ <= kLoggedFailures ||
        failed_handshakes_ % 100 == 0) {
      LS_LOG(Warning) << "refused a connection to " << endpoint_ << ": " << why
                      << " (" << failed_handshakes_ << " refused so far)";
    }
    return;
  }
  // A connection that merely broke off (a reset, a closed pipe) may be
  // chance, as a loopback connect that met itself is; a peer that refused
  // the key, or breaks off every handshake, is not.
  if (!refusal_.ok()) return;
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL &&
      failed_in_a_row_ < kBrokenHandshakes) {
    return;
  }
  refusal_ = FailedPrecondition(
      peer_ + " at " + endpoint_ + " refused this process: " + why +
      "; check that --keys (or $LOCKSTEP_KEYS) names this job's key file "
      "for this role, and --coordinator this job's endpoint");
  LS_LOG(Error) << refusal_.message();
}

void HandshakeWatch::WarnIfUnreachable() {
  if (retries_ == 0) return;
  const int64_t now = NowMillis();
  const int64_t waited = now - first_retry_ms_;
  if (waited < kUnreachableWarnMs) return;
  if (warned_ms_ != 0 && now - warned_ms_ < kUnreachableRepeatMs) return;
  warned_ms_ = now;
  LS_LOG(Warning) << "nothing answers at " << endpoint_ << " for " << peer_
                  << " (connection refused, " << retries_ << " tries in "
                  << waited / 1000
                  << " s): check that it runs and that --coordinator names "
                     "its @endpoint (host and port); still trying";
}

}  // namespace lockstep
