#include "common/termination.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>

#include "common/clock.h"
#include "common/logging.h"

namespace lockstep {
namespace {

std::atomic<bool> g_terminated{false};

}  // namespace

StatusOr<int> PreemptedExitCode() {
  const char* value = std::getenv(kPreemptedExitCodeEnv);
  if (value == nullptr || *value == '\0') return kExitPreempted;
  char* end = nullptr;
  const long code = std::strtol(value, &end, 10);
  if (*end != '\0' || code < 1 || code > 255) {
    return InvalidArgument(std::string(kPreemptedExitCodeEnv) + "='" + value +
                           "' is not an exit status in 1..255");
  }
  return static_cast<int>(code);
}

int RoleExitStatus(const RoleEnd& end, int preempted_code,
                   const std::string& role) {
  if (end.preempted || end.released) {
    if (end.preempted) LS_LOG(Warning) << end.done.message();
    return preempted_code;
  }
  if (end.aborted) {
    // The job's failure, not this role's: the coordinator says why.
    LS_LOG(Warning) << end.done.message();
    return kExitJobAborted;
  }
  if (!end.done.ok()) {
    LS_LOG(Error) << role << " failed: " << end.done.ToString();
    return end.device_unavailable ? kExitDeviceUnavailable : 1;
  }
  return 0;
}

void TerminationSignal::Install() {
  std::signal(SIGTERM, [](int) { TerminationSignal::Request(); });
}

void TerminationSignal::Request() { g_terminated = true; }

bool TerminationSignal::Requested() { return g_terminated; }

bool TerminationWait::TellNow() {
  if (!TerminationSignal::Requested() || deadline_ms_ != 0) return false;
  deadline_ms_ = NowMillis() + kTerminateGraceMs;
  return true;
}

Status TerminationWait::CheckExpired(const std::string& what) const {
  if (deadline_ms_ == 0 || NowMillis() <= deadline_ms_) return Status::Ok();
  return Unavailable("terminated (SIGTERM), and the coordinator did not end " +
                     what + " within " +
                     std::to_string(kTerminateGraceMs / 1000) + " s");
}

}  // namespace lockstep
