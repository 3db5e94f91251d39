// A server's link to its coordinator: the DEALER socket, registering (and
// registering again when a restarted coordinator may take the server
// back), heartbeats, the watch on the coordinator's silence
// (common/coordinator_watch.h), the messages the link settles itself
// (heartbeats, bad messages, NotMember), and how the coordinator ends the
// job (SIGTERM's Leave, Shutdown).
// Thread-safety: the shard's thread; RequestStop from a signal handler.
#ifndef LOCKSTEP_SERVER_SERVER_COORDINATOR_LINK_H_
#define LOCKSTEP_SERVER_SERVER_COORDINATOR_LINK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "common/coordinator_watch.h"
#include "common/status.h"
#include "common/termination.h"
#include "common/transport/zmq/handshake_watch.h"
#include "common/wire/message.h"

namespace lockstep {

class ServerCoordinatorLink {
 public:
  // Connects to `coordinator` (nothing is sent); registrations carry
  // `data_endpoint`. A lost coordinator is waited for `reattach_s`
  // seconds (< 0: $LOCKSTEP_REATTACH_S or 0).
  static StatusOr<std::unique_ptr<ServerCoordinatorLink>> Connect(
      const std::string& coordinator, std::string data_endpoint,
      double reattach_s);

  // Ends every wait with Unavailable("interrupted by a signal").
  // Async-signal-safe.
  static void RequestStop();
  static bool StopRequested();

  const std::string& coordinator() const { return coordinator_; }
  zmq::pollitem_t PollItem() {
    return {static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
  }
  void Send(zmq::message_t header);
  // Registers as `rank` (-1: any), offering its state committed up to
  // `applied_clock` (-1: none) to a coordinator that resumes the job.
  void Register(int rank, int64_t applied_clock = -1);
  // The first Welcome, within
  // `timeout_s` (heartbeating as `rank_hint` meanwhile). Errors: the
  // coordinator went silent, ended the job or refused this server; a signal;
  // the deadline.
  StatusOr<Message> AwaitWelcome(int rank_hint, double timeout_s);

  // Serving as `rank` of a job with `heartbeat_ms`: the watch starts now.
  void Serving(int rank, uint32_t heartbeat_ms);
  // One coordinator message if one is queued, verified; heartbeats, bad
  // messages and NotMember errors are settled here. False when none.
  StatusOr<bool> Receive(Message* msg);
  // Due work each turn: a heartbeat carrying the clock `applied()` says,
  // and while the coordinator is lost, a Register again (offering the
  // state at that clock when `offer_state`: a commit policy's). `applied`
  // is called only then. Unavailable once the coordinator is lost for good.
  Status Tick(const std::function<int64_t()>& applied, bool offer_state);
  // A Welcome while serving: taken back by a coordinator, if it was lost.
  void Welcomed();

  // After SIGTERM: tells the coordinator once (Leave, as `rank`);
  // Unavailable once it has not ended the job within kTerminateGraceMs.
  Status CheckTerminated(int rank);
  // Records how the coordinator ended the job; returns its reason.
  std::string TakeShutdown(const wire::Shutdown& shutdown);
  bool preempted() const { return shutdown_ == wire::ShutdownKind::Preempted; }
  // The coordinator ended the job as failed (Shutdown Aborted).
  bool aborted() const { return shutdown_ == wire::ShutdownKind::Aborted; }
  uint64_t bad_messages() const { return bad_messages_; }

 private:
  ServerCoordinatorLink(std::string coordinator, std::string data_endpoint,
                        double reattach_s);

  const std::string coordinator_;
  const std::string data_endpoint_;
  zmq::socket_t socket_;
  // What ZeroMQ says of the connection: a refused key ends the wait.
  std::unique_ptr<HandshakeWatch> handshake_;
  CoordinatorWatch watch_;
  int rank_ = -1;
  uint32_t heartbeat_ms_ = 1000;
  int64_t next_heartbeat_ms_ = 0;
  uint64_t bad_messages_ = 0;
  TerminationWait termination_;  // after SIGTERM
  // How the coordinator ended the job, once a Shutdown came.
  std::optional<wire::ShutdownKind> shutdown_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SERVER_COORDINATOR_LINK_H_
