// Stale synchronous parallel, SSP(s) (Ho et al., NIPS'13): worker w may
// start clock c once every live worker has completed at least c - s clocks
// (a worker that joined at clock j counts as having completed j), so the
// fastest worker runs at most s clocks ahead of the slowest. Servers apply
// each push on arrival; nothing is ever committed. s = 0 admits exactly
// like BSP.
// Thread-safety: not thread-safe (see SyncPolicy).
#ifndef LOCKSTEP_SYNC_POLICIES_SSP_POLICY_H_
#define LOCKSTEP_SYNC_POLICIES_SSP_POLICY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sync_policies/on_arrival_policy.h"
#include "sync_policies/policy_spec.h"

namespace lockstep {

class SspPolicy : public OnArrivalPolicy {
 public:
  // Parses "ssp:S" (S >= 0, the staleness bound); `job` gives the batches (and
  // seed).
  static StatusOr<std::unique_ptr<SyncPolicy>> Create(const PolicySpec& spec,
                                                      const PolicyJob& job);
  static std::vector<std::string> Forms() { return {"ssp:S"}; }

  // `batches` as in BspPolicy (the last entry covers workers beyond the
  // list). REQUIRES: staleness >= 0.
  SspPolicy(std::vector<uint32_t> batches, int64_t staleness);

  // "ssp:S".
  std::string name() const override;
  // As OnArrivalPolicy's, forgetting the worker's deferred request.
  void OnWorkerJoined(uint32_t worker, int64_t clock,
                      const WorkerCaps& caps) override;
  std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) override;
  // Admits to max(clock, completed clocks of worker) when the SSP rule
  // allows it, else defers (counted once per deferred request). Unknown
  // workers are deferred.
  std::optional<AdmissionDecision> Admit(uint32_t worker,
                                         int64_t clock) override;
  // Per-worker clock, lockstep_clock_gap (max admitted clock minus the
  // slowest worker's completed clocks, <= s), and
  // lockstep_deferred_admissions_total.
  std::map<std::string, double> Metrics() const override;

  int64_t staleness() const { return staleness_; }

 private:
  int64_t staleness_;
  // The request each worker has outstanding, to count deferrals once.
  std::map<uint32_t, int64_t> deferred_;
  uint64_t deferrals_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_SSP_POLICY_H_
