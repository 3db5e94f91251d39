// The stream backend's server side: Lockstep's direct transport on a
// listening TCP or Unix-domain socket ("tcp://host:port" / "ipc:///path").
// Thread-safety: one thread only.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_DATA_PORT_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_DATA_PORT_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "common/transport/data_port.h"

namespace lockstep {

// Binds and listens on `listen` (port 0 picks a free port; an ipc path left
// by a dead process is replaced).
StatusOr<std::unique_ptr<DataPort>> BindStreamPort(const std::string& listen);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_DATA_PORT_H_
