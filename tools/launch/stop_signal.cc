#include "tools/launch/stop_signal.h"

#include <signal.h>
#include <string.h>

#include <csignal>

namespace lockstep {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int signal) { g_stop_signal = signal; }

}  // namespace

void InstallStopSignalHandlers() {
  g_stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: poll() returns at once with EINTR
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int StopSignal() { return g_stop_signal; }

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev
                           : "signal " + std::to_string(signal);
}

}  // namespace lockstep
