// Whether a data-port message comes from the sender it names. With job
// keys a direct data connection proves a ticket (common/security/
// peer_ticket.h), so the port knows who sent each message (Message::role,
// Message::rank); the envelope's sender role and rank are the sender's
// word. A shard serves a message only when they agree: a worker cannot
// push or pull as another rank or as the evaluator, and a server's ticket
// (a backup's subscription) neither pushes nor pulls.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_SERVER_NAMED_SENDER_H_
#define LOCKSTEP_SERVER_NAMED_SENDER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <zmq.hpp>

#include "common/status.h"
#include "common/wire/message.h"

namespace lockstep {

// OK when the shard serves `msg` (header verified) from its sender: the
// connection proves no sender (--security off, the ZeroMQ data port: one
// worker key for all) or the one the message names; the evaluator only
// pulls; a worker's rank is one of the job's `workers`. Errors:
// FailedPrecondition, naming both, for a message that names another
// sender than its connection proved; InvalidArgument for the rest.
Status CheckSender(const Message& msg, uint32_t workers);
// The pushes a shard refused for naming another sender than their
// connection proved, counted by the worker that sent them.
class Impostors {
 public:
  // When CheckSender's `refusal` of `msg` is a worker's push as another
  // sender: the shard's report of it to the coordinator (wire::PushRefused,
  // reason Impersonation, naming the proven worker, with this shard's count
  // of them), which counts it toward that worker's removal.
  std::optional<zmq::message_t> Report(const Message& msg,
                                       const Status& refusal, int shard);

 private:
  std::map<int, uint32_t> counts_;  // by the proven worker rank
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_NAMED_SENDER_H_
