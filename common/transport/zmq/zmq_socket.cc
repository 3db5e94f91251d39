#include "common/transport/zmq/zmq_socket.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>

#include "common/logging.h"
#include "common/transport/transport_keys.h"

namespace lockstep {
namespace {

// How long closing a socket may wait to deliver what is still queued (the
// final Evaluation, a Shutdown): bounded, so a dead peer cannot block exit.
constexpr int kLingerMs = 2000;

void SetCommonOptions(zmq::socket_t& socket) {
  socket.set(zmq::sockopt::linger, kLingerMs);
  // High-water marks of 0 mean "no limit": a ROUTER silently drops messages
  // to a peer past its HWM, which would turn back-pressure into loss.
  socket.set(zmq::sockopt::sndhwm, 0);
  socket.set(zmq::sockopt::rcvhwm, 0);
  socket.set(zmq::sockopt::tcp_keepalive, 1);
  socket.set(zmq::sockopt::sndbuf, 4 << 20);
  socket.set(zmq::sockopt::rcvbuf, 4 << 20);
}

// The role (and worker credential) the ZAP handler named for the
// connection `frame` came from: "worker/N" is role "worker", credential N.
// Empty without CURVE.
void TakeAuthenticatedRole(const zmq::message_t& frame, Message* out) {
  const char* user =
      zmq_msg_gets(const_cast<zmq_msg_t*>(frame.handle()), "User-Id");
  out->role = user == nullptr ? std::string() : std::string(user);
  out->credential = -1;
  const size_t slash = out->role.find('/');
  if (slash == std::string::npos) return;
  out->credential = std::strtoll(out->role.c_str() + slash + 1, nullptr, 10);
  out->role.resize(slash);
}

}  // namespace

namespace {
zmq::context_t* g_context = nullptr;
}  // namespace

zmq::context_t& ProcessContext() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_context = new zmq::context_t(2);
    g_context->set(zmq::ctxopt::blocky, false);
  });
  return *g_context;
}

void CloseProcessContext() {
  if (g_context == nullptr) return;
  StopZapHandler();  // its socket would hold the context open
  // Blocks until queued messages are sent or their linger time is up.
  g_context->close();
}

StatusOr<zmq::socket_t> BindRouter(const std::string& endpoint,
                                   std::string* bound, const char* domain,
                                   int64_t max_message_bytes) {
  const RoleKeys* keys = InstalledTransportKeys();
  // The handler is bound before the socket: never a moment unguarded.
  if (keys != nullptr) LS_RETURN_IF_ERROR(EnsureZapHandler(*keys));
  try {
    zmq::socket_t socket(ProcessContext(), zmq::socket_type::router);
    SetCommonOptions(socket);
    if (keys != nullptr) {
      socket.set(zmq::sockopt::curve_server, 1);
      socket.set(zmq::sockopt::curve_secretkey, keys->secret);
      socket.set(zmq::sockopt::zap_domain, domain);
      socket.set(zmq::sockopt::handshake_ivl, kHandshakeDeadlineMs);
    }
    // Sending to an unknown routing id fails loudly instead of vanishing.
    socket.set(zmq::sockopt::router_mandatory, 1);
    // Before bind: the listener copies the options its connections get.
    socket.set(zmq::sockopt::maxmsgsize, max_message_bytes);
    socket.bind(endpoint);
    *bound = socket.get(zmq::sockopt::last_endpoint);
    return socket;
  } catch (const zmq::error_t& e) {
    return Unavailable("cannot bind " + endpoint + ": " + e.what());
  }
}

StatusOr<zmq::socket_t> ConnectDealer(const std::string& endpoint,
                                      const std::string& identity,
                                      KeyRole server) {
  const RoleKeys* keys = InstalledTransportKeys();
  try {
    zmq::socket_t socket(ProcessContext(), zmq::socket_type::dealer);
    SetCommonOptions(socket);
    if (keys != nullptr) {
      socket.set(zmq::sockopt::curve_serverkey, keys->public_key(server));
      socket.set(zmq::sockopt::curve_publickey, keys->public_key(keys->role));
      socket.set(zmq::sockopt::curve_secretkey, keys->secret);
    }
    if (!identity.empty()) socket.set(zmq::sockopt::routing_id, identity);
    socket.connect(endpoint);
    return socket;
  } catch (const zmq::error_t& e) {
    return Unavailable("cannot connect to " + endpoint + ": " + e.what());
  }
}

std::string AdvertisedEndpoint(const std::string& bound,
                               const std::string& advertise_host) {
  const auto scheme_end = bound.find("://");
  const auto colon = bound.rfind(':');
  if (scheme_end == std::string::npos || colon == std::string::npos ||
      colon <= scheme_end + 3) {
    return bound;
  }
  std::string host = bound.substr(scheme_end + 3, colon - scheme_end - 3);
  if (host != "0.0.0.0" && host != "*" && host != "[::]") return bound;
  std::string replacement = advertise_host;
  if (replacement.empty()) {
    char name[256] = {0};
    if (gethostname(name, sizeof(name) - 1) == 0) replacement = name;
    if (replacement.empty()) replacement = "127.0.0.1";
  }
  return bound.substr(0, scheme_end + 3) + replacement + bound.substr(colon);
}

void SendHeaderOrWarn(zmq::socket_t& socket, zmq::message_t header,
                      const std::string& peer) {
  Message out;
  out.header = std::move(header);
  Status sent = SendMessage(socket, false, std::move(out));
  if (!sent.ok()) LS_LOG(Warning) << peer << " unreachable: " << sent.message();
}

Status SendMessage(zmq::socket_t& socket, bool router, Message&& msg) {
  try {
    if (router) {
      zmq::message_t id(msg.peer.data(), msg.peer.size());
      socket.send(id, zmq::send_flags::sndmore);
    }
    const bool more = !msg.payloads.empty();
    socket.send(msg.header,
                more ? zmq::send_flags::sndmore : zmq::send_flags::none);
    for (size_t i = 0; i < msg.payloads.size(); ++i) {
      const bool last = i + 1 == msg.payloads.size();
      socket.send(msg.payloads[i],
                  last ? zmq::send_flags::none : zmq::send_flags::sndmore);
    }
    return Status::Ok();
  } catch (const zmq::error_t& e) {
    return Unavailable(std::string("send failed: ") + e.what());
  }
}

StatusOr<bool> ReceiveMessage(zmq::socket_t& socket, bool router,
                              Message* out) {
  out->peer.clear();
  out->role.clear();
  out->payloads.clear();
  out->envelope = nullptr;
  try {
    zmq::message_t frame;
    if (!socket.recv(frame, zmq::recv_flags::dontwait)) return false;
    int part = 0;
    bool have_header = false;
    while (true) {
      const bool more = frame.more();
      if (router && part == 0) {
        out->peer.assign(static_cast<const char*>(frame.data()), frame.size());
      } else if (!have_header) {
        // The ROUTER's own routing frame carries no connection metadata.
        TakeAuthenticatedRole(frame, out);
        out->header = std::move(frame);
        have_header = true;
      } else {
        out->payloads.push_back(std::move(frame));
      }
      ++part;
      if (!more) break;
      frame = zmq::message_t();
      // The remaining parts of a multipart message are already queued.
      (void)socket.recv(frame, zmq::recv_flags::none);
    }
    if (!have_header) return InvalidArgument("message without header frame");
    return true;
  } catch (const zmq::error_t& e) {
    return Unavailable(std::string("receive failed: ") + e.what());
  }
}

int PollSockets(zmq::pollitem_t* items, size_t count,
                std::chrono::milliseconds timeout) {
  try {
    return zmq::poll(items, count, timeout);
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return 0;
    throw;
  }
}

}  // namespace lockstep
