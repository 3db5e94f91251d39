// The in-process backend's client side: a channel to an "inproc://name"
// port bound by another thread of this process.
// Thread-safety: one thread at a time.
#ifndef LOCKSTEP_COMMON_TRANSPORT_INPROC_DATA_CHANNEL_H_
#define LOCKSTEP_COMMON_TRANSPORT_INPROC_DATA_CHANNEL_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "common/transport/data_channel.h"

namespace lockstep {

// Connects to the port bound as `endpoint`, waiting at most `timeout_s`
// for it to be bound (its thread may still be starting).
StatusOr<std::unique_ptr<DataChannel>> ConnectInprocChannel(
    const std::string& endpoint, double timeout_s);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_INPROC_DATA_CHANNEL_H_
