// The in-process backend's server side ("inproc://name"): workers and
// servers running as threads of one process hand messages to each other
// without copying a byte. For tests that run a whole job in one process.
// Thread-safety: one thread only (its channels may live on other threads).
#ifndef LOCKSTEP_COMMON_TRANSPORT_INPROC_DATA_PORT_H_
#define LOCKSTEP_COMMON_TRANSPORT_INPROC_DATA_PORT_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "common/transport/data_port.h"

namespace lockstep {

// Binds `listen` ("inproc://name"; "inproc://" alone or a name ending in
// ":0" picks a fresh unique name). Errors: the name is taken.
StatusOr<std::unique_ptr<DataPort>> BindInprocPort(const std::string& listen);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_INPROC_DATA_PORT_H_
