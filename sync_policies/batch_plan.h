// Where each worker's samples lie in the global batch of the clock under
// way, for the barrier policies (BSP, backup, LB-BSP), which run one clock
// at a time. The offsets are fixed when the clock's first worker is
// admitted, from the workers expected in it then, and stay fixed while the
// membership changes: a worker that leaves mid-clock leaves its slice
// unread instead of shifting the others' onto each other, and a worker
// that joins mid-clock has no slice in it (it starts at the next clock).
// Once every admitted worker has left, the clock is planned afresh (its
// pushes were never committed, so no slice was trained on).
// Thread-safety: not thread-safe; owned by its policy.
#ifndef LOCKSTEP_SYNC_POLICIES_BATCH_PLAN_H_
#define LOCKSTEP_SYNC_POLICIES_BATCH_PLAN_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace lockstep {

class BatchPlan {
 public:
  // (worker, batch) of the workers expected in a clock, in rank order.
  using Members = std::vector<std::pair<uint32_t, uint32_t>>;

  // Whether `worker` may take part in `clock`: it has a slice in the plan,
  // or `clock` is not planned yet.
  bool Includes(int64_t clock, uint32_t worker) const;
  // `worker`'s offset in `clock`'s global batch, planning the clock from
  // `members` (their batches' prefix sums) if it is not planned yet, and
  // recording the admission. nullopt when the plan has no slice for it.
  std::optional<uint64_t> Admit(int64_t clock, uint32_t worker,
                                const Members& members);
  // `worker` left: when no admitted worker of the planned clock remains,
  // the plan is dropped.
  void Leave(uint32_t worker);

 private:
  int64_t clock_ = -1;  // the planned clock; -1: none
  std::map<uint32_t, uint64_t> offsets_;
  std::set<uint32_t> admitted_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_BATCH_PLAN_H_
