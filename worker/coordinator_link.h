// A worker's (or the evaluator's) link to the coordinator: the DEALER
// socket, heartbeats (by hand while it waits for its Welcome, then from a
// thread of their own), how long the coordinator has been silent, and the
// coordinator's messages that end whatever the worker waits for: Shutdown,
// Error, and once training runs a Start (a rollback to a snapshot round),
// which is kept until the session applies it.
// Thread-safety: one thread; RequestStop() may be called from a signal
// handler.
#ifndef LOCKSTEP_WORKER_COORDINATOR_LINK_H_
#define LOCKSTEP_WORKER_COORDINATOR_LINK_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "common/coordinator_watch.h"
#include "common/security/peer_ticket.h"
#include "common/status.h"
#include "common/termination.h"
#include "common/transport/zmq/handshake_watch.h"
#include "common/wire/message.h"
#include "worker/heartbeat_thread.h"

namespace lockstep {

// How the coordinator ended a worker's part in the job (its Shutdown):
// finished; preempted (resumable: common/termination.h); released (let
// go after its Leave while the job goes on); aborted (the job failed, not
// this worker); removed (this worker, for its pushes).
enum class JobEnding {
  kNone,
  kFinished,
  kPreempted,
  kReleased,
  kAborted,
  kRemoved
};

class CoordinatorLink {
 public:
  // Connects to `endpoint` (nothing is sent) to speak as `role`; once
  // training runs, a lost coordinator is waited for `reattach_s` seconds
  // (common/coordinator_watch.h; < 0: $LOCKSTEP_REATTACH_S or 0).
  static StatusOr<std::unique_ptr<CoordinatorLink>> Connect(
      const std::string& endpoint, wire::Role role, double reattach_s = -1);

  // Stops every wait of every link with Unavailable("interrupted by a
  // signal"). Async-signal-safe.
  static void RequestStop();
  static bool StopRequested();
  // The flag RequestStop sets, for waits elsewhere that end on it.
  static const std::atomic<bool>* stop_flag();

  const std::string& endpoint() const { return endpoint_; }
  wire::Role role() const { return role_; }

  // Welcomed as `rank` of a job with heartbeat interval `heartbeat_ms`:
  // from now on a thread heartbeats, even while data loads, and the
  // coordinator counts as gone after 10 silent intervals. With job keys
  // the welcome holds this registration's data-plane ticket, which the
  // heartbeats prove (and ticket() gives the data channels).
  Status Welcomed(const wire::Welcome& welcome, uint32_t heartbeat_ms);
  const std::optional<PeerTicket>& ticket() const { return ticket_; }
  // Once training runs, a Start from the coordinator is a rollback.
  void set_training(bool training) { training_ = training; }

  void Send(zmq::message_t header);
  // Registers as `rank_hint` (-1: any rank).
  void SendRegister(int rank_hint);
  // The Describe this worker sent, sent again when it re-attaches to a
  // restarted coordinator (whose Start then rolls the worker back to the
  // round the coordinator resumed from).
  void RememberDescribe(const zmq::message_t& header);
  // Waits (heartbeating) for the next message until `deadline_ms`
  // (NowMillis); false at the deadline. Unavailable on a stop request, a
  // silent coordinator, a Shutdown or a rollback; FailedPrecondition on
  // an Error.
  StatusOr<bool> Await(Message* msg, int64_t deadline_ms);
  // Await until a message of type `type` comes (others are skipped).
  StatusOr<bool> AwaitBody(wire::Body type, int64_t deadline_ms, Message* msg);
  // PsClient's interrupt: a rollback, a shutdown, a signal or a silent
  // coordinator ends the request; other messages are logged and skipped.
  Status CheckDuringRequest();
  // The socket, for a poll that also wakes on the coordinator.
  zmq::pollitem_t PollItem() {
    return {static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
  }

  // How the coordinator ended this worker's part (its Shutdown), if it did.
  JobEnding ending() const;
  // After SIGTERM: tells the coordinator (Leave) and waits for its
  // Shutdown (always an error: Unavailable with its reason, or after
  // kTerminateGraceMs without one).
  Status AwaitShutdown();
  // Shards served elsewhere now (wire::Reroute: a backup was promoted),
  // in the order they came; taken once.
  std::vector<std::pair<uint32_t, std::string>> TakeReroutes() {
    return std::exchange(reroutes_, {});
  }
  bool rollback_pending() const { return rollback_.has_value(); }
  // The pending rollback's Start, verified again (a move may relocate the
  // header's bytes). REQUIRES: rollback_pending().
  StatusOr<Message> TakeRollback();

 private:
  CoordinatorLink(std::string endpoint, wire::Role role, double reattach_s)
      : endpoint_(std::move(endpoint)),
        role_(role),
        watch_(endpoint_, reattach_s) {}
  // One message if one is queued (Heartbeats and bad messages skipped);
  // errors on Shutdown, Error and rollbacks as Await.
  StatusOr<bool> Receive(Message* msg);
  // Unavailable once the coordinator has been silent too long (and did
  // not take this worker back within the re-attach window); registers
  // again while it waits.
  Status CheckAlive();
  // While re-attaching: what the coordinator says (a welcome, an error
  // about an earlier message) on the way to its Start. True when `msg`
  // was taken here.
  StatusOr<bool> HandleReattach(const Message& msg);
  // After SIGTERM: tells the coordinator once (Leave); Unavailable once it
  // has not ended this worker's part within kTerminateGraceMs.
  Status CheckTerminated();
  // Takes the data-plane ticket `welcome` gives (none without job keys)
  // and proves it on a new heartbeat thread.
  Status TakeTicket(const wire::Welcome& welcome);
  // Before the welcome: a heartbeat by hand, at most every interval.
  void SendHeartbeat();

  std::string endpoint_;
  wire::Role role_;
  zmq::socket_t socket_;
  // What ZeroMQ says of the connection: a refused key ends the wait.
  std::unique_ptr<HandshakeWatch> handshake_;
  uint32_t rank_ = 0;
  uint32_t heartbeat_ms_ = 1000;  // the job's default until welcomed
  bool training_ = false;
  int64_t next_heartbeat_ms_ = 0;
  std::unique_ptr<HeartbeatThread> heartbeats_;  // from the Welcome on
  std::optional<PeerTicket> ticket_;             // the last Welcome's
  CoordinatorWatch watch_;
  std::optional<zmq::message_t> describe_;  // for a re-attach
  int64_t welcomed_ms_ = 0;
  uint64_t bad_messages_ = 0;
  // How the coordinator ended the job, once a Shutdown came.
  std::optional<wire::ShutdownKind> shutdown_;
  TerminationWait termination_;      // after SIGTERM
  std::optional<Message> rollback_;  // a Start that came while training
  std::vector<std::pair<uint32_t, std::string>> reroutes_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_COORDINATOR_LINK_H_
