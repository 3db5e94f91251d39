// Whether a data-port message comes from the sender it names. With job
// keys a direct data connection proves a ticket (common/security/
// peer_ticket.h), so the port knows who sent each message (Message::role,
// Message::rank); the envelope's sender role and rank are the sender's
// word. A shard serves a message only when they agree: a worker cannot
// push or pull as another rank or as the evaluator, and a server's ticket
// (a backup's subscription) neither pushes nor pulls.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_SERVER_GUARD_NAMED_SENDER_H_
#define LOCKSTEP_SERVER_GUARD_NAMED_SENDER_H_

#include <cstdint>

#include "common/status.h"
#include "common/wire/message.h"

namespace lockstep {

// OK when the shard serves `msg` (header verified) from its sender: the
// connection proves no sender (--security off, the ZeroMQ data port: one
// worker key for all) or the one the message names; the evaluator only
// pulls; only the evaluator reads an evaluation point; a worker's rank is
// one of the job's `workers`. Errors:
// FailedPrecondition, naming both, for a message that names another
// sender than its connection proved; InvalidArgument for the rest.
Status CheckSender(const Message& msg, uint32_t workers);

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_GUARD_NAMED_SENDER_H_
