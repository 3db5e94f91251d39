// Structured log lines: "TIME LEVEL role=R rank=N clock=C message".
// The identity (role, rank, clock) belongs to the calling thread, so roles
// running as threads of one process (tests) each print their own; a helper
// thread takes its owner's with SetLogIdentity(CurrentLogIdentity()).
// Thread-safety: thread-safe; log lines are written atomically (one write
// per line).
#ifndef LOCKSTEP_COMMON_LOGGING_H_
#define LOCKSTEP_COMMON_LOGGING_H_

#include <cstdint>
#include <sstream>
#include <string>

namespace lockstep {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Who logs: printed on every line of the thread it belongs to.
struct LogIdentity {
  std::string role = "lockstep";
  int rank = -1;       // -1: unassigned (not printed)
  int64_t clock = -1;  // -1: not printed
};

// This thread's identity.
LogIdentity CurrentLogIdentity();
void SetLogIdentity(const LogIdentity& identity);
// Sets this thread's role name and rank.
void SetLogIdentity(const std::string& role, int rank);
void SetLogRank(int rank);
// The clock printed on this thread's lines; -1 hides it.
void SetLogClock(int64_t clock);
void SetMinLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// One log line; the text is emitted when the object is destroyed.
class LogLine {
 public:
  explicit LogLine(LogLevel level) : level_(level) {}
  ~LogLine();
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

// Swallows the stream so LS_LOG is one expression (safe in if/else).
struct LogVoidify {
  void operator&(std::ostream&) {}
};

}  // namespace lockstep

// The replacement is the left operand of the caller's <<, so it cannot be
// parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define LS_LOG(level)                                     \
  !::lockstep::LogEnabled(::lockstep::LogLevel::k##level) \
      ? (void)0                                           \
      : ::lockstep::LogVoidify() &                        \
            ::lockstep::LogLine(::lockstep::LogLevel::k##level).stream()
// NOLINTEND(bugprone-macro-parentheses)

#endif  // LOCKSTEP_COMMON_LOGGING_H_
