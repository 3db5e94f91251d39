#include "common/logging.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace lockstep {
namespace {

thread_local LogIdentity t_identity;
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

LogIdentity CurrentLogIdentity() { return t_identity; }
void SetLogIdentity(const LogIdentity& identity) { t_identity = identity; }
void SetLogIdentity(const std::string& role, int rank) {
  t_identity.role = role;
  t_identity.rank = rank;
}
void SetLogRank(int rank) { t_identity.rank = rank; }
void SetLogClock(int64_t clock) { t_identity.clock = clock; }
void SetMinLogLevel(LogLevel level) { g_min_level = static_cast<int>(level); }
bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= g_min_level.load();
}

LogLine::~LogLine() {
  const LogIdentity& who = t_identity;
  std::string line =
      Timestamp() + " " + LevelName(level_) + " role=" + who.role;
  if (who.rank >= 0) line += " rank=" + std::to_string(who.rank);
  if (who.clock >= 0) line += " clock=" + std::to_string(who.clock);
  line += " " + stream_.str() + "\n";
  // One write(2) per line keeps lines whole when several threads log.
  ssize_t unused = ::write(STDERR_FILENO, line.data(), line.size());
  (void)unused;
}

}  // namespace lockstep
