// Asynchronous parallel: every admission request is granted at once and
// servers apply each push on arrival. Optionally the gradient of a push is
// weighed by 1 / (staleness + 1) (DynSGD-style) and pushes staler than
// `max_staleness` logical clocks are dropped (TF's
// DropStaleGradientOptimizer); the servers enforce both, reading
// staleness_rule().
// Thread-safety: not thread-safe (see SyncPolicy).
#ifndef LOCKSTEP_SYNC_POLICIES_ASP_POLICY_H_
#define LOCKSTEP_SYNC_POLICIES_ASP_POLICY_H_

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

class AspPolicy : public OnArrivalPolicy {
 public:
  // Parses "asp[:scale][:drop=N]": weigh a push's gradient by
  // 1/(staleness+1); drop pushes staler than N logical clocks; `job` gives the
  // batches (and seed).
  static StatusOr<std::unique_ptr<SyncPolicy>> Create(const PolicySpec& spec,
                                                      const PolicyJob& job);
  static std::vector<std::string> Forms() {
    return {"asp", "asp:scale", "asp:drop=N", "asp:scale:drop=N"};
  }

  // `batches` as in BspPolicy. `rule.max_staleness` is -1 (never drop) or
  // >= 0.
  AspPolicy(std::vector<uint32_t> batches, StalenessRule rule);

  // "asp", "asp:scale", "asp:drop=N" or "asp:scale:drop=N".
  std::string name() const override;
  StalenessRule staleness_rule() const override { return rule_; }
  // Never defers a live worker: admits it to max(clock, its completed
  // clocks). A worker that is not live (never joined, or left) is
  // deferred, as under every other policy.
  std::optional<AdmissionDecision> Admit(uint32_t worker,
                                         int64_t clock) override;
  // The clock table's metrics and the staleness rule.
  std::map<std::string, double> Metrics() const override;

 private:
  StalenessRule rule_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_ASP_POLICY_H_
