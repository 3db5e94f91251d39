#include "common/http/http_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "common/clock.h"
#include "common/http/process_health.h"
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

// Reads a request's head (up to its blank line, 8 KiB or 250 ms: requests
// are answered one at a time, so a client that sends nothing holds the
// next probe up only that long).
std::string ReadRequestHead(int client) {
  std::string head;
  char buf[2048];
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
  while (head.size() < 8192 && head.find("\r\n\r\n") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd item{client, POLLIN, 0};
    if (left.count() <= 0 ||
        ::poll(&item, 1, static_cast<int>(left.count())) <= 0) {
      break;
    }
    const ssize_t n = ::recv(client, buf, sizeof(buf), 0);
    if (n <= 0) break;
    head.append(buf, static_cast<size_t>(n));
  }
  return head;
}

// Whether the request line is "GET <path>" (with a query, or the HTTP
// version, after it).
bool IsGet(std::string_view head, std::string_view path) {
  constexpr std::string_view kGet = "GET ";
  if (head.substr(0, kGet.size()) != kGet) return false;
  head.remove_prefix(kGet.size());
  if (head.substr(0, path.size()) != path) return false;
  return head.size() > path.size() &&
         (head[path.size()] == ' ' || head[path.size()] == '?');
}

bool IsLoopback(const in_addr& addr) {
  return (ntohl(addr.s_addr) >> 24) == 127;
}

std::string Response(const char* status, const std::string& extra_headers,
                     const std::string& body) {
  return std::string("HTTP/1.0 ") + status + "\r\n" + extra_headers +
         "Content-Type: text/plain; version=0.0.4\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace

StatusOr<std::string> ReadMetricsToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return InvalidArgument("cannot read the metrics token file " + path);
  }
  std::string token((std::istreambuf_iterator<char>(in)), {});
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  token =
      first == std::string::npos ? "" : token.substr(first, last - first + 1);
  if (token.size() < 16 ||
      token.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidArgument("the metrics token in " + path +
                           " must be one word of at least 16 characters");
  }
  // As for key files: a mounted Secret is readable by the pod's group
  // (defaultMode 0440 under fsGroup); one anybody may read is warned of.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 &&
      (st.st_mode & (S_IROTH | S_IWOTH | S_IWGRP)) != 0) {
    LS_LOG(Warning) << "the metrics token file " << path
                    << " can be read by others than its owner and group "
                       "(chmod 600)";
  }
  return token;
}

bool CarriesBearer(std::string_view request, std::string_view token) {
  if (token.empty()) return true;
  size_t at = 0;
  while ((at = request.find("\r\n", at)) != std::string_view::npos) {
    at += 2;
    std::string_view line = request.substr(at);
    line = line.substr(0, line.find("\r\n"));
    constexpr std::string_view kName = "authorization:";
    if (line.size() < kName.size()) continue;
    bool name = true;
    for (size_t i = 0; i < kName.size(); ++i) {
      name =
          name && std::tolower(static_cast<unsigned char>(line[i])) == kName[i];
    }
    if (!name) continue;
    std::string_view value = line.substr(kName.size());
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    constexpr std::string_view kScheme = "Bearer ";
    if (value.substr(0, kScheme.size()) != kScheme) return false;
    value.remove_prefix(kScheme.size());
    if (value.size() != token.size()) return false;
    unsigned char diff = 0;  // constant time in the token's length
    for (size_t i = 0; i < token.size(); ++i) {
      diff |= static_cast<unsigned char>(value[i] ^ token[i]);
    }
    return diff == 0;
  }
  return false;
}

HttpRoute RouteRequest(std::string_view head, HttpEndpoint::Serves serves,
                       std::string_view token) {
  if (head.empty()) return HttpRoute::kNone;
  if (IsGet(head, "/healthz")) return HttpRoute::kHealth;
  if (IsGet(head, "/readyz")) return HttpRoute::kReady;
  if (serves == HttpEndpoint::Serves::kMetricsAndHealth &&
      IsGet(head, "/metrics")) {
    return CarriesBearer(head, token) ? HttpRoute::kMetrics
                                      : HttpRoute::kUnauthorized;
  }
  return HttpRoute::kNotFound;
}

StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(
    const std::string& listen, std::string token, Serves serves) {
  const char* what = serves == Serves::kHealthOnly ? "health" : "metrics";
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument(std::string(what) + " address '" + listen +
                           "' is not HOST:PORT");
  }
  const std::string host = listen.substr(0, colon);
  const int port = std::atoi(listen.c_str() + colon + 1);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (port < 0 || port > 65535 ||
      inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return InvalidArgument(std::string(what) + " address '" + listen +
                           "' needs an IPv4 address and a port");
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) ||
      ::listen(fd, 16) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return Unavailable(std::string("cannot serve ") + what + " on " + listen +
                       ": " + why);
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string base =
      "http://" + host + ":" + std::to_string(ntohs(addr.sin_port));
  if (serves == Serves::kMetricsAndHealth && token.empty() &&
      !IsLoopback(addr.sin_addr)) {
    LS_LOG(Warning) << "metrics on " << listen
                    << " without --metrics-token-file: anyone who reaches "
                       "the port reads the job's metrics";
  }
  std::unique_ptr<HttpEndpoint> server(
      new HttpEndpoint(fd, base, std::move(token), serves));
  server->thread_ = std::thread([s = server.get(), who = CurrentLogIdentity()] {
    SetLogIdentity(who);
    s->Serve();
  });
  return server;
}

HttpEndpoint::HttpEndpoint(int fd, std::string base_url, std::string token,
                           Serves serves)
    : fd_(fd),
      base_url_(std::move(base_url)),
      url_(base_url_ + "/metrics"),
      token_(std::move(token)),
      serves_(serves) {}

HttpEndpoint::~HttpEndpoint() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
}

void HttpEndpoint::Publish(std::string text) {
  MutexLock lock(&mu_);
  text_ = std::move(text);
}

void HttpEndpoint::Serve() {
  while (!stop_) {
    pollfd item{fd_, POLLIN, 0};
    if (::poll(&item, 1, 200) <= 0) continue;
    const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    Answer(client);
    ::close(client);
  }
}

void HttpEndpoint::Answer(int client) {
  // A scraper or a probe sends a short request; read what arrives within a
  // second.
  const std::string head = ReadRequestHead(client);
  switch (RouteRequest(head, serves_, token_)) {
    case HttpRoute::kNone:
      return;
    case HttpRoute::kHealth:
      WriteAll(client, ProcessHealth::Alive(NowMillis())
                           ? Response("200 OK", "", "ok\n")
                           : Response("503 Service Unavailable", "",
                                      "the role's loop stopped\n"));
      return;
    case HttpRoute::kReady:
      WriteAll(client, ProcessHealth::Ready()
                           ? Response("200 OK", "", "ready\n")
                           : Response("503 Service Unavailable", "",
                                      "not in the job yet\n"));
      return;
    case HttpRoute::kMetrics:
      return AnswerMetrics(client);
    case HttpRoute::kUnauthorized:
      if (unauthorized_++ < 5) {
        LS_LOG(Warning) << "refused a metrics request without the bearer token";
      }
      WriteAll(client,
               Response("401 Unauthorized", "WWW-Authenticate: Bearer\r\n",
                        "a bearer token is required\n"));
      return;
    case HttpRoute::kNotFound:
      WriteAll(client, Response("404 Not Found", "",
                                serves_ == Serves::kMetricsAndHealth
                                    ? "not found: try /metrics, /healthz or "
                                      "/readyz\n"
                                    : "not found: try /healthz or /readyz\n"));
      return;
  }
}

void HttpEndpoint::AnswerMetrics(int client) {
  std::string body;
  {
    MutexLock lock(&mu_);
    body = text_;
  }
  WriteAll(client, Response("200 OK", "", body));
}

}  // namespace lockstep
