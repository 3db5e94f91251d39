// One accepted connection of a direct data port (data_port.cc): its
// socket, the job's handshake until the peer proved its ticket (nothing it
// sends is read as a message before), who the peer is from then on, and
// its reader and writer, sealed once an aead handshake finished.
// Thread-safety: a StreamConnection belongs to its port's thread.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_STREAM_CONNECTION_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_STREAM_CONNECTION_H_

#include <memory>
#include <optional>
#include <string>

#include "common/security/job_keys.h"
#include "common/transport/stream/frame_reader.h"
#include "common/transport/stream/frame_writer.h"
#include "common/transport/stream/handshake.h"

namespace lockstep {

// What a port authenticates its connections with.
struct PortKeys {
  DataSecurity mode = DataSecurity::kAuth;
  std::string ticket_key;  // TicketKey of the server's keys
};

class StreamConnection {
 public:
  // How the peer's handshake stands after Authenticate.
  enum class Proof { kProven, kPending, kRefused, kGone };

  // Owns `fd` (closed with the connection).
  explicit StreamConnection(int fd) : fd_(fd) {}
  ~StreamConnection();
  StreamConnection(const StreamConnection&) = delete;
  StreamConnection& operator=(const StreamConnection&) = delete;

  // With the port's `keys` (null: none, the port runs --security off),
  // sends the server's hello and starts the deadline. False: the peer is
  // gone.
  bool Greet(const PortKeys* keys, double now_s);
  // Reads the peer's proof and, once it is whole, answers it (and, for
  // aead, seals the connection). kRefused: `reason` says why.
  Proof Authenticate(std::string* reason);
  // True once the peer proved itself (at once without keys).
  bool proven() const { return handshake_ == nullptr; }
  // When Greet sent the hello.
  double greeted_s() const { return greeted_s_; }
  // True while the peer has not proved itself by its deadline.
  bool late(double now_s) const { return !proven() && now_s > deadline_s_; }
  // The ticket the peer proved (its secret dropped); nullopt without keys.
  const std::optional<PeerTicket>& peer() const { return peer_; }

  int fd() const { return fd_; }
  FrameReader& reader() { return reader_; }
  FrameWriter& writer() { return writer_; }

 private:
  // The aead data plane: everything after the handshake is sealed, both
  // ways.
  Status Seal(const SessionKeys& session);

  int fd_;
  std::unique_ptr<ServerHandshake> handshake_;
  std::optional<PeerTicket> peer_;
  double greeted_s_ = 0;
  double deadline_s_ = 0;
  FrameReader reader_;
  FrameWriter writer_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_STREAM_CONNECTION_H_
