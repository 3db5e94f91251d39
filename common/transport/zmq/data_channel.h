// The ZeroMQ backend's client side: a DEALER socket connected to a server's
// ROUTER data port ("zmq+tcp://..." / "zmq+ipc://...").
// Thread-safety: one thread at a time.
#ifndef LOCKSTEP_COMMON_TRANSPORT_ZMQ_DATA_CHANNEL_H_
#define LOCKSTEP_COMMON_TRANSPORT_ZMQ_DATA_CHANNEL_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "common/transport/data_channel.h"

namespace lockstep {

// Connects to `endpoint` ("zmq+" form); ZeroMQ completes the connection in
// the background, so this never waits.
StatusOr<std::unique_ptr<DataChannel>> ConnectZmqChannel(
    const std::string& endpoint);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_ZMQ_DATA_CHANNEL_H_
