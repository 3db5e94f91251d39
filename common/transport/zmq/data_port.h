// The ZeroMQ backend's server side: a ROUTER socket
// ("zmq+tcp://host:port" / "zmq+ipc:///path").
// Thread-safety: one thread only.
#ifndef LOCKSTEP_COMMON_TRANSPORT_ZMQ_DATA_PORT_H_
#define LOCKSTEP_COMMON_TRANSPORT_ZMQ_DATA_PORT_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "common/transport/data_port.h"

namespace lockstep {

// Binds a ROUTER on `listen` ("zmq+" form; port 0 picks a free port).
StatusOr<std::unique_ptr<DataPort>> BindZmqPort(const std::string& listen);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_ZMQ_DATA_PORT_H_
