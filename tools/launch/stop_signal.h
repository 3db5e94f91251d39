// The stop signals of the tools that run children (lockstep-launch,
// lockstep-experiment): SIGINT, SIGTERM and SIGHUP set a flag instead of
// killing the process, so it can stop its children in order first. The
// handlers do not restart system calls, so a poll() waiting on children
// returns at once. SIGPIPE is ignored: a closed stdout must not kill the
// tool and orphan its children's logs.
// Thread-safety: install from the main thread; the flag is async-signal-safe.
#ifndef LOCKSTEP_TOOLS_LAUNCH_STOP_SIGNAL_H_
#define LOCKSTEP_TOOLS_LAUNCH_STOP_SIGNAL_H_

#include <string>

namespace lockstep {

// Clears the flag and installs the handlers.
void InstallStopSignalHandlers();

// The stop signal received since InstallStopSignalHandlers, or 0.
int StopSignal();

// "SIGINT".
std::string SignalName(int signal);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_STOP_SIGNAL_H_
