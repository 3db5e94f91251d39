#include "common/transport/data_port.h"

#include "common/transport/endpoint.h"
#include "common/transport/inproc/data_port.h"
#include "common/transport/stream/data_port.h"
#include "common/transport/zmq/data_port.h"

namespace lockstep {

StatusOr<std::unique_ptr<DataPort>> DataPort::Bind(const std::string& listen) {
  switch (BackendOf(listen)) {
    case TransportBackend::kZmq:
      return BindZmqPort(listen);
    case TransportBackend::kInproc:
      return BindInprocPort(listen);
    case TransportBackend::kStream:
      break;
  }
  return BindStreamPort(listen);
}

}  // namespace lockstep
