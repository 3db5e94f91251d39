// The stream backend's client side: Lockstep's direct transport over one
// TCP or Unix-domain stream socket ("tcp://..." / "ipc://...").
// Thread-safety: one thread at a time.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_DATA_CHANNEL_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_DATA_CHANNEL_H_

#include <memory>
#include <string>

#include "common/security/peer_ticket.h"
#include "common/status.h"
#include "common/transport/data_channel.h"

namespace lockstep {

// Connects to `endpoint`, waiting at most `timeout_s` for the server to
// accept (it may still be starting; with `listening`, not: ConnectDirect).
// Sends wait at most `timeout_s` for the socket to drain. With a job key
// installed the connection proves `ticket` (errors: none given, or the
// handshake's).
StatusOr<std::unique_ptr<DataChannel>> ConnectStreamChannel(
    const std::string& endpoint, double timeout_s, bool listening,
    const PeerTicket* ticket);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_DATA_CHANNEL_H_
