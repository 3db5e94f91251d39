// Synchronous SGD with backup workers (Chen et al. 2016), "backup:B": of
// the N live workers that joined at or before clock c, the first
// max(1, N - B) to report c are committed (listed in rank order) as soon
// as the last of them arrives; the pushes of the others arrive late and are
// dropped (counted here; the coordinator and servers discard them).
// Admission is BSP's: clock c may start once c - 1 is committed, and an
// older request (a late worker, a re-joining one) jumps to the current
// clock. Servers buffer pushes per clock and apply on commit.
// Thread-safety: not thread-safe (see SyncPolicy).
#ifndef LOCKSTEP_SYNC_POLICIES_BACKUP_POLICY_H_
#define LOCKSTEP_SYNC_POLICIES_BACKUP_POLICY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sync_policies/batch_plan.h"
#include "sync_policies/policy_spec.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

class BackupPolicy : public SyncPolicy {
 public:
  // Parses "backup:B" (B backup workers, B < workers); `job` gives the batches
  // (and seed).
  static StatusOr<std::unique_ptr<SyncPolicy>> Create(const PolicySpec& spec,
                                                      const PolicyJob& job);
  static std::vector<std::string> Forms() { return {"backup:B"}; }

  // `batches` as in BspPolicy; `backups` is B (0 behaves like BSP).
  BackupPolicy(std::vector<uint32_t> batches, uint32_t backups);

  // "backup:B".
  std::string name() const override;
  ApplyMode apply_mode() const override { return ApplyMode::kOnCommit; }
  void ResumeAt(int64_t clock) override { committed_ = clock - 1; }
  // Joins at max(clock, CurrentClock()); from then on it counts in N.
  void OnWorkerJoined(uint32_t worker, int64_t clock,
                      const WorkerCaps& caps) override;
  // Forgets the worker and its uncommitted reports; N shrinks, which may
  // complete clocks: returns their commits.
  std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) override;
  // Grants clock <= committed + 1 as committed + 1; defers later clocks and
  // unknown workers.
  std::optional<AdmissionDecision> Admit(uint32_t worker,
                                         int64_t clock) override;
  // Records the report in arrival order and returns the commits it
  // completes. A first report of an already committed clock is late: it is
  // counted as a dropped push. Duplicates and departed workers are ignored.
  std::vector<CommitDecision> OnClockDone(const ClockReport& report) override;
  int64_t CurrentClock() const override { return committed_ + 1; }
  // lockstep_dropped_pushes_total and
  // lockstep_worker_dropped_pushes_total{worker="w"}, the committed clock, live
  // workers, per-worker batch.
  std::map<std::string, double> Metrics() const override;

  uint32_t backups() const { return backups_; }
  // The last clock committed (-1 before the first commit).
  int64_t committed_clock() const { return committed_; }
  uint64_t dropped_total() const { return dropped_total_; }

 private:
  // Workers needed to commit `clock`: max(1, N - B).
  size_t NeededFor(int64_t clock) const;
  // Commits every consecutive clock whose first reporters are complete.
  std::vector<CommitDecision> CommitReady();
  void CountDrop(uint32_t worker);

  std::vector<uint32_t> batches_;
  uint32_t backups_;
  // Live workers and the clock each joined at.
  std::map<uint32_t, int64_t> live_;
  BatchPlan plan_;
  // Live reporters of each uncommitted clock, in arrival order.
  std::map<int64_t, std::vector<uint32_t>> reporters_;
  // The highest clock each worker reported, to tell duplicates from late
  // reports (a worker reports its clocks in increasing order).
  std::map<uint32_t, int64_t> last_report_;
  std::map<uint32_t, uint64_t> dropped_;
  uint64_t dropped_total_ = 0;
  int64_t committed_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_BACKUP_POLICY_H_
