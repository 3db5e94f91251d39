#include "common/termination.h"

#include <atomic>
#include <csignal>

#include "common/clock.h"

namespace lockstep {
namespace {

std::atomic<bool> g_terminated{false};

}  // namespace

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
