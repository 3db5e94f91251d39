// A minimal HTTP endpoint of a role's process: the Prometheus text a role
// publishes at GET /metrics (the coordinator's metrics), and the process's
// health for an orchestrator's probes at GET /healthz (200 while the
// role's loop is alive, 503 once it stopped beating: ProcessHealth) and
// GET /readyz (200 once the role is ready: registered, or bound). One
// background thread accepts connections; the owner publishes a fresh
// snapshot of the metrics now and then. With a token, only a request for
// /metrics carrying "Authorization: Bearer <token>" is answered (401
// otherwise); the health paths say nothing about the job and answer
// anyone, as a kubelet's probe carries no token. Listening beyond the
// loopback without a token is allowed but warned about when metrics are
// served.
// Thread-safety: Publish() is thread-safe; the rest is for the owner.
#ifndef LOCKSTEP_COMMON_HTTP_HTTP_ENDPOINT_H_
#define LOCKSTEP_COMMON_HTTP_HTTP_ENDPOINT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"

namespace lockstep {

class HttpEndpoint {
 public:
  enum class Serves { kMetricsAndHealth, kHealthOnly };
  // Listens on "HOST:PORT" (PORT 0 picks a free port); `token` empty:
  // anyone who reaches the port may read the metrics. kHealthOnly: /metrics
  // is not found (a server's or worker's probe port).
  static StatusOr<std::unique_ptr<HttpEndpoint>> Start(
      const std::string& listen, std::string token = "",
      Serves serves = Serves::kMetricsAndHealth);
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // "http://HOST:PORT/metrics".
  const std::string& url() const { return url_; }
  // "http://HOST:PORT".
  const std::string& base_url() const { return base_url_; }
  // Replaces the text served from now on.
  void Publish(std::string text);
  // Requests refused for want of the token so far.
  uint64_t unauthorized() const { return unauthorized_; }

 private:
  HttpEndpoint(int fd, std::string base_url, std::string token, Serves serves);
  void Serve();
  void Answer(int client);
  void AnswerMetrics(int client);

  int fd_;
  std::string base_url_;
  std::string url_;
  const std::string token_;
  const Serves serves_;
  std::atomic<uint64_t> unauthorized_{0};
  Mutex mu_;
  std::string text_ GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The bearer token in the file at `path`: its one line, surrounding
// whitespace dropped. Errors: unreadable, shorter than 16 characters, or
// holding whitespace. A file others than its owner and group may read is
// warned about (a Kubernetes Secret mounted under fsGroup is 0440).
StatusOr<std::string> ReadMetricsToken(const std::string& path);

// Whether the HTTP request head `request` carries "Authorization: Bearer
// `token`" (the header name in any case; compared in constant time).
bool CarriesBearer(std::string_view request, std::string_view token);

// What a request head asks an endpoint serving `serves` with `token` for:
// the answer HttpEndpoint gives it. Only "GET /metrics" (a query or the
// version after it) with the token, when metrics are served, is kMetrics.
enum class HttpRoute {
  kNone,
  kHealth,
  kReady,
  kMetrics,
  kUnauthorized,
  kNotFound
};
HttpRoute RouteRequest(std::string_view head, HttpEndpoint::Serves serves,
                       std::string_view token);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_HTTP_HTTP_ENDPOINT_H_
