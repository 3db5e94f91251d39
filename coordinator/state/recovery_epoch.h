// The recovery epoch: the number every message of the job's current
// timeline carries. Recovery advances it when it rolls every shard back
// to a round; Enrollment's Welcomes and Starts carry it, and a worker's
// message of an older epoch never counts.
// Thread-safety: not thread-safe; the coordinator's thread.
#ifndef LOCKSTEP_COORDINATOR_STATE_RECOVERY_EPOCH_H_
#define LOCKSTEP_COORDINATOR_STATE_RECOVERY_EPOCH_H_

#include <cstdint>

namespace lockstep {

class RecoveryEpoch {
 public:
  uint32_t value() const { return value_; }
  void Advance() { ++value_; }

 private:
  uint32_t value_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_STATE_RECOVERY_EPOCH_H_
