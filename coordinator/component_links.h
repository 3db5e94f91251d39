// How the coordinator's components hear of each other without reaching
// into one another: the clock driver's commits reach the snapshot rounds
// and the recovery (ClockListener), and the snapshot rounds read the
// policy, the layout and whether a recovery is under way (RoundContext).
// The coordinator and the components' tests wire them the same way.
// Thread-safety: as the components: one thread.
#ifndef LOCKSTEP_COORDINATOR_COMPONENT_LINKS_H_
#define LOCKSTEP_COORDINATOR_COMPONENT_LINKS_H_

#include <cstdint>
#include <string>

#include "coordinator/clock/clock_driver.h"
#include "coordinator/enrollment/enrollment.h"
#include "coordinator/faults/recovery.h"
#include "coordinator/rounds/snapshot_rounds.h"
#include "coordinator/state/run_recorder.h"
#include "sync_policies/policy_state.h"

namespace lockstep {

class ComponentLinks : public ClockListener, public RoundContext {
 public:
  // The components, once all are built (they are handed this object while
  // being built, and call it only later). They must outlive it.
  void Connect(Enrollment* enrollment, ClockDriver* clock,
               SnapshotRounds* rounds, Recovery* recovery,
               const RunRecorder* recorder) {
    enrollment_ = enrollment;
    clock_ = clock;
    rounds_ = rounds;
    recovery_ = recovery;
    recorder_ = recorder;
  }

  // ClockListener.
  void OnApplied(int64_t clock) override {
    recovery_->LogFirstCommitAfterRecovery(clock);
  }
  void OnRoundPoint(int64_t clock, bool force) override {
    rounds_->MaybeStartRound(clock, force);
  }
  bool Paused() const override { return recovery_->recovering(); }
  // RoundContext.
  int64_t LastCommittedClock() const override {
    return enrollment_->training() ? clock_->LastCommittedClock() : -1;
  }
  std::string PolicyName() const override { return clock_->policy().name(); }
  PolicyState PolicyStateNow() const override {
    return clock_->PolicyStateNow();
  }
  uint32_t Shards() const override {
    return enrollment_->layout().num_shards();
  }
  bool Recovering() const override { return recovery_->recovering(); }
  double TrainSecondsNow() const override { return recorder_->TrainSeconds(); }
  uint64_t SamplesNow() const override { return recorder_->samples(); }

 private:
  Enrollment* enrollment_ = nullptr;
  ClockDriver* clock_ = nullptr;
  SnapshotRounds* rounds_ = nullptr;
  Recovery* recovery_ = nullptr;
  const RunRecorder* recorder_ = nullptr;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_COMPONENT_LINKS_H_
