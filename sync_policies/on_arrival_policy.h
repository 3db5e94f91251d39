// What the apply-on-arrival policies (SSP, ASP) share: servers apply each
// push as it arrives and nothing is ever committed, so the policy's whole
// state is a clock table of each worker's progress. Subclasses decide
// only whom Admit lets start a clock, and when.
// Thread-safety: not thread-safe (see SyncPolicy).
#ifndef LOCKSTEP_SYNC_POLICIES_ON_ARRIVAL_POLICY_H_
#define LOCKSTEP_SYNC_POLICIES_ON_ARRIVAL_POLICY_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "sync_policies/clock_table.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

class OnArrivalPolicy : public SyncPolicy {
 public:
  ApplyMode apply_mode() const override { return ApplyMode::kOnArrival; }
  void ResumeAt(int64_t clock) override { table_.StartAt(clock); }
  // The clock table: a resumed worker starts where it was.
  PolicyState SaveState() const override { return table_.SaveState(); }
  Status LoadState(const PolicyState& state) override {
    return table_.LoadState(state);
  }
  // Joins at max(clock, CurrentClock()).
  void OnWorkerJoined(uint32_t worker, int64_t clock,
                      const WorkerCaps& caps) override;
  // Never commits; the departed worker stops holding others back.
  std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) override;
  // Records the worker's progress; never commits.
  std::vector<CommitDecision> OnClockDone(const ClockReport& report) override;
  // The slowest live worker's completed clocks.
  int64_t CurrentClock() const override { return table_.MinCompleted(); }
  // Per-worker clock and the clock gap (ClockTable::AddMetrics).
  std::map<std::string, double> Metrics() const override;

  const ClockTable& clock_table() const { return table_; }

 protected:
  // `batches` as in BspPolicy (the last entry covers workers beyond the
  // list).
  explicit OnArrivalPolicy(std::vector<uint32_t> batches)
      : batches_(std::move(batches)) {}

  // Admits `worker` to `clock`: records it and gives its configured batch.
  AdmissionDecision AdmitTo(uint32_t worker, int64_t clock);

  ClockTable table_;

 private:
  std::vector<uint32_t> batches_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_ON_ARRIVAL_POLICY_H_
