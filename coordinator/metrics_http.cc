#include "coordinator/metrics_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "common/logging.h"

namespace lockstep {
namespace {

void WriteAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n =
        ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

}  // namespace

StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument("metrics address '" + listen + "' is not HOST:PORT");
  }
  const std::string host = listen.substr(0, colon);
  const int port = std::atoi(listen.c_str() + colon + 1);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (port < 0 || port > 65535 ||
      inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return InvalidArgument("metrics address '" + listen +
                           "' needs an IPv4 address and a port");
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) ||
      ::listen(fd, 16) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return Unavailable("cannot serve metrics on " + listen + ": " + why);
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string url = "http://" + host + ":" +
                          std::to_string(ntohs(addr.sin_port)) + "/metrics";
  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer(fd, url));
  server->thread_ = std::thread([s = server.get(), who = CurrentLogIdentity()] {
    SetLogIdentity(who);
    s->Serve();
  });
  return server;
}

MetricsHttpServer::MetricsHttpServer(int fd, std::string url)
    : fd_(fd), url_(std::move(url)) {}

MetricsHttpServer::~MetricsHttpServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
}

void MetricsHttpServer::Publish(std::string text) {
  MutexLock lock(&mu_);
  text_ = std::move(text);
}

void MetricsHttpServer::Serve() {
  while (!stop_) {
    pollfd item{fd_, POLLIN, 0};
    if (::poll(&item, 1, 200) <= 0) continue;
    const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    Answer(client);
    ::close(client);
  }
}

void MetricsHttpServer::Answer(int client) {
  // A scraper sends a short request; read what arrives within a second.
  char buf[2048];
  pollfd item{client, POLLIN, 0};
  ssize_t n = 0;
  if (::poll(&item, 1, 1000) > 0) n = ::recv(client, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return;
  buf[n] = '\0';
  const bool metrics = std::strncmp(buf, "GET /metrics", 12) == 0;
  std::string body;
  if (metrics) {
    MutexLock lock(&mu_);
    body = text_;
  } else {
    body = "not found: try /metrics\n";
  }
  WriteAll(client, std::string(metrics ? "HTTP/1.0 200 OK\r\n"
                                       : "HTTP/1.0 404 Not Found\r\n") +
                       "Content-Type: text/plain; version=0.0.4\r\n"
                       "Content-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body);
}

}  // namespace lockstep
