#include "common/logging.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace lockstep {
namespace {

std::mutex g_identity_mu;
std::string g_role = "lockstep";  // GUARDED_BY(g_identity_mu)
std::atomic<int> g_rank{-1};
std::atomic<int64_t> g_clock{-1};
std::atomic<int> g_min_level{static_cast<int>(LogLevel::kInfo)};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarning:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?";
}

std::string Timestamp() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                now.time_since_epoch())
                .count() %
            1000;
  std::tm tm_utc{};
  gmtime_r(&secs, &tm_utc);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                tm_utc.tm_year + 1900, tm_utc.tm_mon + 1, tm_utc.tm_mday,
                tm_utc.tm_hour, tm_utc.tm_min, tm_utc.tm_sec,
                static_cast<int>(ms));
  return buf;
}

}  // namespace

void SetLogIdentity(const std::string& role, int rank) {
  std::lock_guard<std::mutex> lock(g_identity_mu);
  g_role = role;
  g_rank = rank;
}

void SetLogRank(int rank) { g_rank = rank; }
void SetLogClock(int64_t clock) { g_clock = clock; }
void SetMinLogLevel(LogLevel level) { g_min_level = static_cast<int>(level); }
bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= g_min_level.load();
}

LogLine::~LogLine() {
  std::string role;
  {
    std::lock_guard<std::mutex> lock(g_identity_mu);
    role = g_role;
  }
  std::string line = Timestamp() + " " + LevelName(level_) + " role=" + role;
  if (g_rank >= 0) line += " rank=" + std::to_string(g_rank.load());
  if (g_clock >= 0) line += " clock=" + std::to_string(g_clock.load());
  line += " " + stream_.str() + "\n";
  // One write(2) per line keeps lines whole when several threads log.
  ssize_t unused = ::write(STDERR_FILENO, line.data(), line.size());
  (void)unused;
}

}  // namespace lockstep
