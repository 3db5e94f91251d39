// What the other components hear of the clock (ClockDriver and its
// EvaluationDriver tell it; ComponentLinks passes it on to the snapshot
// rounds and the recovery).
// Thread-safety: the coordinator's thread.
#ifndef LOCKSTEP_COORDINATOR_CLOCK_CLOCK_LISTENER_H_
#define LOCKSTEP_COORDINATOR_CLOCK_CLOCK_LISTENER_H_

#include <cstdint>

namespace lockstep {

class ClockListener {
 public:
  virtual ~ClockListener() = default;
  // `clock` was committed (apply-on-arrival: a push of it applied).
  virtual void OnApplied(int64_t clock) = 0;
  // The state after `clock` is on every server's queue: a snapshot round
  // may start there (`force`: the job's last clock).
  virtual void OnRoundPoint(int64_t clock, bool force) = 0;
  // A recovery is under way: the evaluator is not answered meanwhile.
  virtual bool Paused() const = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_CLOCK_CLOCK_LISTENER_H_
