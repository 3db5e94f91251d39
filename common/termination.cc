#include "common/termination.h"

#include <atomic>
#include <csignal>

namespace lockstep {
namespace {

std::atomic<bool> g_terminated{false};

}  // namespace

void TerminationSignal::Install() {
  std::signal(SIGTERM, [](int) { TerminationSignal::Request(); });
}

void TerminationSignal::Request() { g_terminated = true; }

bool TerminationSignal::Requested() { return g_terminated; }

}  // namespace lockstep
