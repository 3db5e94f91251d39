// A minimal HTTP endpoint that serves the coordinator's metrics in the
// Prometheus text format at GET /metrics. One background thread accepts
// connections; the event loop publishes a fresh snapshot now and then.
// Thread-safety: Publish() is thread-safe; the rest is for the owner.
#ifndef LOCKSTEP_COORDINATOR_METRICS_HTTP_H_
#define LOCKSTEP_COORDINATOR_METRICS_HTTP_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"

namespace lockstep {

class MetricsHttpServer {
 public:
  // Listens on "HOST:PORT" (PORT 0 picks a free port).
  static StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // "http://HOST:PORT/metrics".
  const std::string& url() const { return url_; }
  // Replaces the text served from now on.
  void Publish(std::string text);

 private:
  MetricsHttpServer(int fd, std::string url);
  void Serve();
  void Answer(int client);

  int fd_;
  std::string url_;
  Mutex mu_;
  std::string text_ GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_METRICS_HTTP_H_
