// A server's or worker's watch on its coordinator: when it last heard
// from it, and what to do when it stops hearing. A coordinator silent for
// 10 heartbeat intervals is gone. With a re-attach window (a coordinator
// restarted under --supervise, or by an engine, at the same endpoint) the
// role then keeps running: it registers again once a second and takes the
// new coordinator's welcome, and only gives up when the window passes
// without one. Being told it is not a member (NotMember: a new coordinator
// process heard from it first) opens the window at once. Without a window
// (0 s, the default for roles started by hand) a silent coordinator ends
// the role, as it always did.
// Thread-safety: one thread.
#ifndef LOCKSTEP_COMMON_COORDINATOR_WATCH_H_
#define LOCKSTEP_COMMON_COORDINATOR_WATCH_H_

#include <cstdint>
#include <string>

#include "common/status.h"

namespace lockstep {

// The environment variable a launcher sets for the roles it starts
// (lockstep-launch --supervise: 60 s), read when no flag says otherwise.
inline constexpr char kReattachEnv[] = "LOCKSTEP_REATTACH_S";

class CoordinatorWatch {
 public:
  // `reattach_s` < 0: $LOCKSTEP_REATTACH_S, or 0 when unset or not a
  // number of seconds.
  explicit CoordinatorWatch(std::string endpoint, double reattach_s = -1);

  // The job's heartbeat interval: silence of 10 of them is the limit.
  void set_heartbeat_ms(uint32_t heartbeat_ms);
  double reattach_s() const { return static_cast<double>(window_ms_) / 1000; }

  // Heard from the coordinator at `now_ms` (any message).
  void Heard(int64_t now_ms);
  // Told by a coordinator that this role is not its member. True when the
  // role waits to be taken back (the window opens); false without a
  // window: the role should end, a supervisor or engine starts it again.
  bool Forgotten(int64_t now_ms);
  // Welcomed (again): the window closes.
  void Welcomed(int64_t now_ms);
  // The coordinator sent what it sends only to its members (an admission,
  // a commit): it still knows this role, which was only silent (paused,
  // slow); the window closes.
  void StillKnown(int64_t now_ms);

  // Whether the role waits for a coordinator to take it back.
  bool reattaching() const { return opened_ms_ >= 0; }
  // Ok while the coordinator is alive or the window is open; Unavailable
  // saying how long it was silent once the role should give up.
  Status Check(int64_t now_ms);
  // While re-attaching: whether a Register is due (at once, then every
  // second).
  bool RegisterDue(int64_t now_ms);

 private:
  void Open(int64_t now_ms);

  const std::string endpoint_;
  int64_t window_ms_ = 0;
  int64_t limit_ms_ = 10000;
  int64_t last_heard_ms_;
  int64_t opened_ms_ = -1;
  int64_t next_register_ms_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_COORDINATOR_WATCH_H_
