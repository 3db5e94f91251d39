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
#include <string>

#include "common/status.h"

namespace lockstep {

// The exit status of a role whose job was preempted and can resume from
// its snapshot rounds (EX_TEMPFAIL, "try again later"; Slurm's RequeueExit
// can name it), and of a worker terminated alone that left a job going on
// (an engine replaces it: it rejoins at the current clock).
inline constexpr int kExitPreempted = 75;
// The exit status of a server or worker whose job the coordinator ended
// as failed (Shutdown Aborted): not this role's failure; the coordinator's
// log and exit say why.
inline constexpr int kExitJobAborted = 3;
// The exit status of a worker told to compute on a device its machine
// lacks (no GPU, no driver): the job goes on without it, and starting it
// again on the same machine would fail the same way, so a supervisor does
// not.
inline constexpr int kExitDeviceUnavailable = 4;
// Where an engine retries only some codes (a TFJob's restartPolicy
// ExitCode retries 128-255), the environment names another.
inline constexpr char kPreemptedExitCodeEnv[] = "LOCKSTEP_PREEMPTED_EXIT_CODE";

// $LOCKSTEP_PREEMPTED_EXIT_CODE, else kExitPreempted. InvalidArgument when
// it is set to anything but an integer in 1..255 (0 would read as success
// and the engine would not restart the role).
StatusOr<int> PreemptedExitCode();
// How long a terminated server or worker waits for the coordinator's
// Shutdown before it gives up: below the engines' 30 s grace.
inline constexpr int64_t kTerminateGraceMs = 25000;
// How long the coordinator waits for its preemption round to be durable:
// below kTerminateGraceMs, so the roles hear how the job ended.
inline constexpr int64_t kPreemptionRoundMs = 20000;

// How a role's run ended, for its exit status.
struct RoleEnd {
  Status done;
  bool preempted = false;  // the job was preempted: resumable
  bool released = false;   // a worker let go from a job that goes on
  bool aborted = false;    // told the job failed (not this role's failure)
  bool device_unavailable = false;  // its machine lacks its device
};

// The exit status of a role that ended as `end` (docs/binaries.md): 0, the
// preempted code (`preempted_code`, for a preempted or released role), 3
// (told the job failed), 4 (no device) or 1; the reason is logged, as a
// failure of `role` where it is one.
int RoleExitStatus(const RoleEnd& end, int preempted_code,
                   const std::string& role);

class TerminationSignal {
 public:
  // Makes SIGTERM call Request().
  static void Install();
  static void Request();
  static bool Requested();
};

// A terminated server's or worker's wait for the coordinator's word.
class TerminationWait {
 public:
  // True exactly once, after SIGTERM: tell the coordinator (Leave) now;
  // the wait's kTerminateGraceMs count from here.
  bool TellNow();
  // Unavailable ("terminated (SIGTERM), and the coordinator did not end
  // `what` within 25 s") once the wait is over; OK before.
  Status CheckExpired(const std::string& what) const;

 private:
  int64_t deadline_ms_ = 0;  // set once the coordinator was told
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TERMINATION_H_
