#include "common/transport/endpoint.h"

namespace lockstep {
namespace {

constexpr const char kZmqPrefix[] = "zmq+";
constexpr const char kInprocPrefix[] = "inproc://";

bool StartsWith(const std::string& text, const char* prefix) {
  return text.rfind(prefix, 0) == 0;
}

}  // namespace

TransportBackend BackendOf(const std::string& endpoint) {
  if (StartsWith(endpoint, kZmqPrefix)) return TransportBackend::kZmq;
  if (StartsWith(endpoint, kInprocPrefix)) return TransportBackend::kInproc;
  return TransportBackend::kStream;
}

bool IsZmqDataEndpoint(const std::string& endpoint) {
  return StartsWith(endpoint, kZmqPrefix);
}

std::string ZmqAddress(const std::string& endpoint) {
  return IsZmqDataEndpoint(endpoint) ? endpoint.substr(sizeof(kZmqPrefix) - 1)
                                     : endpoint;
}

std::string IpcSocketPath(const std::string& endpoint) {
  const std::string address = ZmqAddress(endpoint);
  return StartsWith(address, "ipc://") ? address.substr(6) : "";
}

}  // namespace lockstep
