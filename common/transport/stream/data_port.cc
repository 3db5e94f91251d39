#include "common/transport/stream/data_port.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "common/clock.h"
#include "common/logging.h"
#include "common/transport/stream/socket.h"
#include "common/transport/stream/stream_connection.h"
#include "common/transport/transport_keys.h"

namespace lockstep {
namespace {

class StreamDataPort : public DataPort {
 public:
  StreamDataPort(std::string bound, int listener, std::string ipc_path,
                 std::optional<PortKeys> keys)
      : DataPort(std::move(bound)),
        listener_(listener),
        ipc_path_(std::move(ipc_path)),
        keys_(std::move(keys)) {
    struct stat st {};
    if (!ipc_path_.empty() && stat(ipc_path_.c_str(), &st) == 0) {
      ipc_inode_ = st.st_ino;
    }
  }
  ~StreamDataPort() override {
    connections_.clear();  // closes their sockets
    close(listener_);
    if (spare_fd_ >= 0) close(spare_fd_);
    // Only our own socket file: a successor may have bound the path since.
    struct stat st {};
    if (!ipc_path_.empty() && stat(ipc_path_.c_str(), &st) == 0 &&
        st.st_ino == ipc_inode_) {
      unlink(ipc_path_.c_str());
    }
  }
  StreamDataPort(const StreamDataPort&) = delete;
  StreamDataPort& operator=(const StreamDataPort&) = delete;

  size_t AddPollItems(std::vector<zmq::pollitem_t>* items) override {
    CloseLateHandshakes();
    polled_.clear();
    items->push_back({nullptr, listener_, ZMQ_POLLIN, 0});
    for (auto& [id, c] : connections_) {
      const short events = static_cast<short>(
          ZMQ_POLLIN | (c->writer().empty() ? 0 : ZMQ_POLLOUT));
      items->push_back({nullptr, c->fd(), events, 0});
      polled_.push_back(id);
    }
    return 1 + polled_.size();
  }

  // Writes before reads: a peer's socket that drained lets its queued
  // replies go before more of its requests are taken in. Connections that
  // hit the per-read cap last time are read again even without an event,
  // since some of their bytes may be staged already, which no poll reports.
  void Process(const zmq::pollitem_t* items) override {
    std::set<uint32_t> backlog;
    backlog.swap(backlog_);
    for (size_t i = 0; i < polled_.size(); ++i) {
      const short revents = items[1 + i].revents;
      const bool behind = backlog.count(polled_[i]) > 0;
      if (revents == 0 && !behind) continue;
      auto it = connections_.find(polled_[i]);
      if (it == connections_.end()) continue;
      if (revents & ZMQ_POLLOUT) Flush(it);
      if (it != connections_.end() &&
          (behind || (revents & (ZMQ_POLLIN | ZMQ_POLLERR)))) {
        ReadAll(it);
      }
    }
    if (items[0].revents & ZMQ_POLLIN) {
      int fd = AcceptDirect(listener_);
      for (; fd >= 0; fd = AcceptDirect(listener_)) {
        if (!MakeRoomForAHandshake()) {
          close(fd);  // before the hello: the peer asks again
          continue;
        }
        auto connection = std::make_unique<StreamConnection>(fd);
        connection->reader().LimitPayload(max_payload_);
        // With a job key installed, the peer is greeted with the hello.
        if (!connection->Greet(keys_ ? &*keys_ : nullptr, NowSeconds())) {
          continue;
        }
        auto it = connections_.emplace(next_id_++, std::move(connection)).first;
        // Data may already be waiting.
        ReadAll(it);
      }
      if (errno == EMFILE || errno == ENFILE) ShedAConnection();
    }
  }

  Status SendLending(Message&& msg, size_t frame) override {
    auto it = connections_.find(PeerId(msg.peer));
    if (it == connections_.end()) {
      return Unavailable("the worker connection is closed");
    }
    LS_RETURN_IF_ERROR(it->second->writer().EnqueueLent(std::move(msg), frame));
    Flush(it);
    DropIfUnread(it);
    return Status::Ok();
  }

  void ReclaimLent() override {
    for (auto& [id, c] : connections_) c->writer().CopyLent();
  }

  bool Backlogged() const override { return !backlog_.empty(); }

  void LimitPayload(uint64_t bytes) override {
    max_payload_ = bytes;
    for (auto& [id, c] : connections_) c->reader().LimitPayload(bytes);
  }

  void LimitUnreadReplies(uint64_t bytes) override {
    max_worker_unread_ = std::min(bytes, kMaxQueuedReplyBytes);
  }

  StatusOr<bool> Receive(Message* out) override {
    if (ready_.empty()) return false;
    *out = std::move(ready_.front());
    ready_.pop_front();
    return true;
  }

  Status Send(Message&& msg) override {
    auto it = connections_.find(PeerId(msg.peer));  // no id: UINT32_MAX
    if (it == connections_.end()) {
      return Unavailable("the worker connection is closed");
    }
    LS_RETURN_IF_ERROR(it->second->writer().Enqueue(std::move(msg)));
    Flush(it);
    DropIfUnread(it);
    return Status::Ok();
  }

 private:
  using Iter = std::map<uint32_t, std::unique_ptr<StreamConnection>>::iterator;

  // Takes the peer's proof as far as it has come. False: the connection is
  // not (yet) proven, or is gone.
  bool Authenticate(Iter it) {
    std::string reason;
    switch (it->second->Authenticate(&reason)) {
      case StreamConnection::Proof::kProven:
        return true;
      case StreamConnection::Proof::kPending:
        return false;
      case StreamConnection::Proof::kRefused:
        if (++refused_connections_ <= 10 || refused_connections_ % 1000 == 0) {
          LS_LOG(Warning) << "refused a data connection ("
                          << refused_connections_ << " so far): " << reason;
        }
        break;
      case StreamConnection::Proof::kGone:
        break;
    }
    Drop(it);
    return false;
  }

  // Closes connections that have not authenticated within the deadline: an
  // intruder holding sockets open costs a descriptor for seconds, not for
  // the job.
  void CloseLateHandshakes() {
    const double now = NowSeconds();
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if (it->second->late(now)) {
        ++handshake_timeouts_;
        Drop(it);
      }
      it = next;
    }
  }

  // Whether a new connection is taken: at most kMaxPendingHandshakes are
  // unproven at once. When they are, the oldest that had kHandshakeGraceS
  // to answer the hello and sent nothing is closed (an honest peer answers
  // in milliseconds, and its answer waits to be read); when none is, the
  // new one is closed before the server's hello, which its peer takes as
  // "ask again" (ClientHandshake). So peers holding handshakes open take
  // neither every descriptor nor the honest peers' place.
  bool MakeRoomForAHandshake() {
    size_t pending = 0;
    auto silent = connections_.end();
    const double now = NowSeconds();
    for (auto it = connections_.begin(); it != connections_.end(); ++it) {
      if (it->second->proven()) continue;
      ++pending;
      int waiting = 0;
      if (silent == connections_.end() &&
          now - it->second->greeted_s() >= kHandshakeGraceS &&
          ioctl(it->second->fd(), FIONREAD, &waiting) == 0 && waiting == 0) {
        silent = it;
      }
    }
    if (pending < kMaxPendingHandshakes) return true;
    ++handshake_timeouts_;
    if (silent == connections_.end()) return false;
    Drop(silent);
    return true;
  }

  // Out of descriptors with connections waiting: the listener stays
  // readable and a poll loop would spin on it. The spare descriptor is
  // given up to accept one and close it at once, and taken again.
  void ShedAConnection() {
    if (++shed_connections_ == 1 || shed_connections_ % 1000 == 0) {
      LS_LOG(Warning) << "out of file descriptors: closed a new data "
                         "connection at once ("
                      << shed_connections_ << " so far)";
    }
    if (spare_fd_ >= 0) close(spare_fd_);
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) close(fd);
    spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  // Closes a connection whose peer leaves more replies unread than it may:
  // a worker's (or the evaluator's) ticket max_worker_unread_, any other
  // kMaxQueuedReplyBytes.
  void DropIfUnread(Iter it) {
    if (it == connections_.end()) return;
    const auto& peer = it->second->peer();
    const bool worker = peer && peer->role != TicketRole::kServer;
    const uint64_t limit = worker ? max_worker_unread_ : kMaxQueuedReplyBytes;
    if (it->second->writer().queued_bytes() > limit) {
      LS_LOG(Warning) << "closed a data connection that left "
                      << it->second->writer().queued_bytes()
                      << " bytes of replies unread (at most " << limit << ")";
      Drop(it);
    }
  }

  static std::string PeerName(uint32_t id) {
    std::string peer(1 + sizeof(id), '\0');
    std::memcpy(peer.data() + 1, &id, sizeof(id));
    return peer;
  }
  static uint32_t PeerId(const std::string& peer) {
    uint32_t id = UINT32_MAX;
    if (peer.size() == 1 + sizeof(id)) {
      std::memcpy(&id, peer.data() + 1, sizeof(id));
    }
    return id;
  }

  // Takes at most kMaxMessagesPerRead messages from one connection, then
  // notes it as backlogged, so one busy worker cannot starve the others.
  void ReadAll(Iter it) {
    if (!it->second->proven() && !Authenticate(it)) return;
    Message msg;
    for (int taken = 0;; ++taken) {
      if (taken == kMaxMessagesPerRead) {
        backlog_.insert(it->first);
        return;
      }
      auto r = it->second->reader().Read(it->second->fd(), &msg);
      if (!r.ok()) {
        ++bad_streams_;
        LS_LOG(Warning) << "closed a data connection: " << r.status().message();
        Drop(it);
        return;
      }
      if (*r == FrameReader::Result::kClosed) {
        Drop(it);
        return;
      }
      if (*r == FrameReader::Result::kWouldBlock) return;
      msg.peer = PeerName(it->first);
      // Who sent it is who the connection proved to be, whatever the
      // message says.
      if (const auto& peer = it->second->peer()) {
        msg.role = TicketRoleName(peer->role);
        msg.rank = peer->rank;
        msg.incarnation = peer->incarnation;
      }
      ready_.push_back(std::move(msg));
    }
  }

  void Flush(Iter& it) {
    auto done = it->second->writer().Flush(it->second->fd());
    if (!done.ok()) {
      Drop(it);
      it = connections_.end();
    }
  }

  void Drop(Iter it) {
    backlog_.erase(it->first);
    connections_.erase(it);
  }

  // Unproven connections held at once, at most, and how long each has to
  // prove itself before a newer one may take its place
  // (MakeRoomForAHandshake).
  static constexpr size_t kMaxPendingHandshakes = 64;
  static constexpr double kHandshakeGraceS = 1.0;

  int listener_;
  // Held for ShedAConnection: the one descriptor it can free.
  int spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  uint64_t shed_connections_ = 0;
  uint64_t max_payload_ = kMaxPayloadBytes;
  uint64_t max_worker_unread_ = kMaxQueuedReplyBytes;
  std::string ipc_path_;
  std::optional<PortKeys> keys_;  // none: --security off
  ino_t ipc_inode_ = 0;
  uint32_t next_id_ = 1;
  std::set<uint32_t> backlog_;  // connections Process must read again
  std::map<uint32_t, std::unique_ptr<StreamConnection>> connections_;
  std::vector<uint32_t> polled_;
  std::deque<Message> ready_;
};

}  // namespace

StatusOr<std::unique_ptr<DataPort>> BindStreamPort(const std::string& listen) {
  LS_ASSIGN_OR_RETURN(DirectAddress address, ParseDirectEndpoint(listen));
  std::string bound;
  std::optional<PortKeys> keys;
  if (const RoleKeys* installed = InstalledTransportKeys()) {
    // Only a server (or the coordinator's) key computes the ticket key.
    keys.emplace();
    keys->mode = installed->data_plane;
    LS_ASSIGN_OR_RETURN(keys->ticket_key, TicketKey(*installed));
  }
  LS_ASSIGN_OR_RETURN(int fd, ListenDirect(listen, &bound));
  return std::unique_ptr<DataPort>(new StreamDataPort(
      bound, fd, address.ipc ? address.path : "", std::move(keys)));
}

}  // namespace lockstep
