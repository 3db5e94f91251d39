// Bulk synchronous parallel: clock c is committed when every live worker has
// reported it; a worker may start clock c once clock c-1 is committed.
// Servers buffer pushes per clock and apply on commit, and defer pulls for c
// until c-1 is applied, so no pull ever sees a partial clock.
// Thread-safety: not thread-safe (see SyncPolicy).
#ifndef LOCKSTEP_SYNC_POLICIES_BSP_POLICY_H_
#define LOCKSTEP_SYNC_POLICIES_BSP_POLICY_H_

#include <map>
#include <set>
#include <vector>

#include "sync_policies/sync_policy.h"

namespace lockstep {

class BspPolicy : public SyncPolicy {
 public:
  // `batches[w]` is worker w's batch; workers beyond the list use the last
  // entry (a one-entry list means the same batch everywhere).
  explicit BspPolicy(std::vector<uint32_t> batches);

  std::string name() const override { return "bsp"; }
  wire::ApplyMode apply_mode() const override {
    return wire::ApplyMode::OnCommit;
  }
  void OnWorkerJoined(uint32_t worker, int64_t clock) override;
  std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) override;
  bool MayStart(uint32_t worker, int64_t clock) const override;
  uint32_t BatchQuota(uint32_t worker, int64_t clock) override;
  std::vector<CommitDecision> OnClockDone(const ClockReport& report) override;

  // The last clock committed (-1 before the first commit).
  int64_t committed_clock() const { return committed_; }

 private:
  // Commits every consecutive clock that all live workers have reported.
  std::vector<CommitDecision> CommitReady();

  std::vector<uint32_t> batches_;
  std::set<uint32_t> live_;
  // Workers that reported each uncommitted clock.
  std::map<int64_t, std::set<uint32_t>> reported_;
  int64_t committed_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_BSP_POLICY_H_
