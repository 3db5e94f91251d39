// Bulk synchronous parallel: clock c is committed when every live worker
// that joined at or before c has reported it; a worker may start clock c
// once clock c-1 is committed. Servers buffer pushes per clock and apply on
// commit, and defer pulls for c until c-1 is applied, so no pull ever sees
// a partial clock. A worker that asks for an old clock (it re-joined) is
// moved to the current one; one that joins while the current clock is
// under way without a slice of it starts at the next (BatchPlan).
// Thread-safety: not thread-safe (see SyncPolicy).
#ifndef LOCKSTEP_SYNC_POLICIES_BSP_POLICY_H_
#define LOCKSTEP_SYNC_POLICIES_BSP_POLICY_H_

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "common/status.h"
#include "sync_policies/batch_plan.h"
#include "sync_policies/policy_spec.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

class BspPolicy : public SyncPolicy {
 public:
  // Parses "bsp" (no parameters); `job` gives the batches (and seed).
  static StatusOr<std::unique_ptr<SyncPolicy>> Create(const PolicySpec& spec,
                                                      const PolicyJob& job);
  static std::vector<std::string> Forms() { return {"bsp"}; }

  // `batches[w]` is worker w's batch; workers beyond the list use the last
  // entry (a one-entry list means the same batch everywhere).
  explicit BspPolicy(std::vector<uint32_t> batches);

  std::string name() const override { return "bsp"; }
  ApplyMode apply_mode() const override { return ApplyMode::kOnCommit; }
  void ResumeAt(int64_t clock) override { committed_ = clock - 1; }
  void OnWorkerJoined(uint32_t worker, int64_t clock,
                      const WorkerCaps& caps) override;
  std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) override;
  std::optional<AdmissionDecision> Admit(uint32_t worker,
                                         int64_t clock) override;
  std::vector<CommitDecision> OnClockDone(const ClockReport& report) override;
  int64_t CurrentClock() const override { return committed_ + 1; }
  std::map<std::string, double> Metrics() const override;

  // The last clock committed (-1 before the first commit).
  int64_t committed_clock() const { return committed_; }

 protected:
  // Worker w's batch at `clock` (LB-BSP overrides with its quotas).
  virtual uint32_t QuotaOf(uint32_t worker, int64_t clock) const;
  // Called after `clock` is committed, before admissions to clock+1.
  virtual void OnCommitted(int64_t /*clock*/) {}
  // Live workers and the clock each joined at.
  const std::map<uint32_t, int64_t>& live() const { return live_; }

 private:
  // Commits every consecutive clock that all live workers have reported.
  std::vector<CommitDecision> CommitReady();

  std::vector<uint32_t> batches_;
  std::map<uint32_t, int64_t> live_;
  BatchPlan plan_;
  // Workers that reported each uncommitted clock.
  std::map<int64_t, std::set<uint32_t>> reported_;
  int64_t committed_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_BSP_POLICY_H_
