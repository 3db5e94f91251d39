#include "common/transport/data_channel.h"

#include "common/transport/inproc/data_channel.h"
#include "common/transport/stream/data_channel.h"
#include "common/transport/zmq/data_channel.h"

namespace lockstep {

StatusOr<std::unique_ptr<DataChannel>> DataChannel::Connect(
    const std::string& endpoint, double timeout_s, bool listening,
    const PeerTicket* ticket) {
  switch (BackendOf(endpoint)) {
    case TransportBackend::kZmq:
      return ConnectZmqChannel(endpoint);
    case TransportBackend::kInproc:
      return ConnectInprocChannel(endpoint, timeout_s);
    case TransportBackend::kStream:
      break;
  }
  return ConnectStreamChannel(endpoint, timeout_s, listening, ticket);
}

}  // namespace lockstep
