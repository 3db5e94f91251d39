// A minimal HTTP endpoint that serves the coordinator's metrics in the
// Prometheus text format at GET /metrics. One background thread accepts
// connections; the event loop publishes a fresh snapshot now and then.
// With a token, only a request carrying "Authorization: Bearer <token>" is
// answered (401 otherwise); listening beyond the loopback without one is
// allowed but warned about.
// Thread-safety: Publish() is thread-safe; the rest is for the owner.
#ifndef LOCKSTEP_COORDINATOR_METRICS_HTTP_H_
#define LOCKSTEP_COORDINATOR_METRICS_HTTP_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"

namespace lockstep {

class MetricsHttpServer {
 public:
  // Listens on "HOST:PORT" (PORT 0 picks a free port); `token` empty:
  // anyone who reaches the port may read.
  static StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, std::string token = "");
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // "http://HOST:PORT/metrics".
  const std::string& url() const { return url_; }
  // Replaces the text served from now on.
  void Publish(std::string text);
  // Requests refused for want of the token so far.
  uint64_t unauthorized() const { return unauthorized_; }

 private:
  MetricsHttpServer(int fd, std::string url, std::string token);
  void Serve();
  void Answer(int client);

  int fd_;
  std::string url_;
  const std::string token_;
  std::atomic<uint64_t> unauthorized_{0};
  Mutex mu_;
  std::string text_ GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The bearer token in the file at `path`: its one line, surrounding
// whitespace dropped. Errors: unreadable, shorter than 16 characters, or
// holding whitespace. A file others may read is warned about.
StatusOr<std::string> ReadMetricsToken(const std::string& path);

// Whether the HTTP request head `request` carries "Authorization: Bearer
// `token`" (the header name in any case; compared in constant time).
bool CarriesBearer(std::string_view request, std::string_view token);

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_METRICS_HTTP_H_
