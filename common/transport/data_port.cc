#include "common/transport/data_port.h"

#include <cstring>
#include <string>

#include "common/transport/buffer_pool.h"
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

Status DataPort::SendLending(Message&& msg, size_t frame) {
  if (frame >= msg.payloads.size()) {
    return InvalidArgument("no payload frame " + std::to_string(frame) +
                           " to lend");
  }
  zmq::message_t& lent = msg.payloads[frame];
  zmq::message_t owned = BufferPool::Process().Frame(lent.size());
  if (lent.size() > 0) std::memcpy(owned.data(), lent.data(), lent.size());
  lent = std::move(owned);
  return Send(std::move(msg));
}

}  // namespace lockstep
