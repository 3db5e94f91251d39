// Sends the worker's heartbeats from a thread of its own, on its own DEALER
// socket, so long blocking work (loading a data set, a large evaluation, a
// big batch) never makes a healthy worker look dead. The coordinator matches
// these heartbeats to the worker by role and rank, which each proves with
// the worker's ticket (with job keys; coordinator/state/ticket_desk.h), and
// answers each one; the time of the last answer tells the main thread the
// coordinator is alive.
// Thread-safety: last_reply_ms() may be called from any thread; the socket
// belongs to the internal thread.
#ifndef LOCKSTEP_WORKER_HEARTBEAT_THREAD_H_
#define LOCKSTEP_WORKER_HEARTBEAT_THREAD_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "common/security/peer_ticket.h"
#include "common/status.h"
#include "common/wire/message.h"

namespace lockstep {

class HeartbeatThread {
 public:
  // Connects to `coordinator` and starts heartbeating as `role` (a worker
  // or the evaluator) `rank` every `interval_ms`, proving `ticket` (the
  // Welcome's; none without job keys).
  static StatusOr<std::unique_ptr<HeartbeatThread>> Start(
      const std::string& coordinator, wire::Role role, uint32_t rank,
      uint32_t interval_ms,
      const std::optional<PeerTicket>& ticket = std::nullopt);
  ~HeartbeatThread();  // stops and joins the thread
  HeartbeatThread(const HeartbeatThread&) = delete;
  HeartbeatThread& operator=(const HeartbeatThread&) = delete;

  // Monotonic milliseconds (NowMillis) of the last reply; 0 before any.
  int64_t last_reply_ms() const { return last_reply_ms_; }
  // ... of the last NotMember answer: a coordinator that does not know
  // this worker (a new process); 0 before any.
  int64_t not_member_ms() const { return not_member_ms_; }

 private:
  HeartbeatThread(std::string coordinator, wire::Role role, uint32_t rank,
                  uint32_t interval_ms,
                  const std::optional<PeerTicket>& ticket);
  // Runs on the thread, which owns `socket` from its start.
  void Loop(zmq::socket_t& socket);

  std::string coordinator_;
  wire::Role role_;
  uint32_t rank_;
  uint32_t interval_ms_;
  uint32_t incarnation_;  // of the ticket
  std::string proof_;     // HeartbeatProof; empty without a ticket
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> last_reply_ms_{0};
  std::atomic<int64_t> not_member_ms_{0};
  std::thread thread_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_HEARTBEAT_THREAD_H_
