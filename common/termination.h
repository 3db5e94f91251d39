// How a role hears that the cluster engine is terminating it. Slurm
// (preemption, `scontrol requeue`, scancel, `--signal` before the time
// limit) and Kubernetes (pod deletion, eviction, scale-down) send SIGTERM
// and, a grace period later (Slurm's KillWait, Kubernetes' pod
// terminationGracePeriodSeconds: 30 s by default in both), SIGKILL. Every
// role takes SIGTERM as "terminated, end resumably": the coordinator takes
// a snapshot round of the newest commit and shuts the job down with
// ShutdownKind Preempted; a server or worker tells the coordinator (Leave)
// and waits for its Shutdown. SIGINT (Ctrl-C, the launcher's stop) stays
// "stop now".
// Thread-safety: Request() is async-signal-safe; the rest may be called
// from any thread.
#ifndef LOCKSTEP_COMMON_TERMINATION_H_
#define LOCKSTEP_COMMON_TERMINATION_H_

#include <cstdint>

namespace lockstep {

// The exit status of a role whose job was preempted and can resume from
// its snapshot rounds (EX_TEMPFAIL, "try again later"; Slurm's RequeueExit
// can name it).
inline constexpr int kExitPreempted = 75;
// How long a terminated server or worker waits for the coordinator's
// Shutdown before it gives up: below the engines' 30 s grace.
inline constexpr int64_t kTerminateGraceMs = 25000;
// How long the coordinator waits for its preemption round to be durable:
// below kTerminateGraceMs, so the roles hear how the job ended.
inline constexpr int64_t kPreemptionRoundMs = 20000;

class TerminationSignal {
 public:
  // Makes SIGTERM call Request().
  static void Install();
  static void Request();
  static bool Requested();
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TERMINATION_H_
