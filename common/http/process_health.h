// Whether this process's role is alive and ready, as an orchestrator's
// probes ask (HttpEndpoint's /healthz and /readyz). A role's loop calls
// Beat() on every turn - the coordinator's event loop, a server's serving
// loop, a worker's heartbeat thread (which runs through long
// computations) - and SetReady() once it has its place in the job (a
// coordinator bound, a server or worker welcomed). One role per process,
// so the state is the process's.
// Thread-safety: every function may be called from any thread.
#ifndef LOCKSTEP_COMMON_HTTP_PROCESS_HEALTH_H_
#define LOCKSTEP_COMMON_HTTP_PROCESS_HEALTH_H_

#include <cstdint>

namespace lockstep {

class ProcessHealth {
 public:
  // A loop that stopped beating this long ago is reported unhealthy: far
  // beyond any loop's poll period (at most a heartbeat), short against a
  // probe's usual 3 failures x 10 s.
  static constexpr int64_t kStaleMs = 15000;

  static void Beat();
  // While one lives the role counts as alive though its loop does not
  // turn: a long step it takes on purpose (a server restoring a large
  // round), which a probe must not cut short.
  class Busy {
   public:
    Busy();
    ~Busy();
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;
  };
  static void SetReady(bool ready);
  // Alive: beaten within kStaleMs of `now_ms` (NowMillis), busy, or never
  // beaten yet (a role still starting up is not dead).
  static bool Alive(int64_t now_ms);
  static bool Ready();
  // Back to a process that has not started (tests).
  static void Reset();
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_HTTP_PROCESS_HEALTH_H_
