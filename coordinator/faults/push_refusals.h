// The pushes the shards refused (server/guard/push_guard.h: values that are not
// finite, a gradient norm above --max-grad-norm; server/guard/request_rules.h:
// a push that breaks the protocol's rules), counted per worker and
// reason for /metrics and the summary, and the workers that only send
// poison: one a shard refused --max-refused-pushes times in a row is
// removed from the job (the policy goes on without it, as after a death)
// and told why (Shutdown Aborted: it exits 1); a worker credential it held
// is banned (credential_bans.h). The clocks still commit: each shard
// applies the pushes it accepted.
// Thread-safety: the coordinator's thread only.
#ifndef LOCKSTEP_COORDINATOR_FAULTS_PUSH_REFUSALS_H_
#define LOCKSTEP_COORDINATOR_FAULTS_PUSH_REFUSALS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "common/http/prometheus_text.h"
#include "common/job_config.h"
#include "common/wire/message.h"
#include "coordinator/enrollment/enrollment.h"
#include "coordinator/faults/credential_bans.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"

namespace lockstep {

class PushRefusals {
 public:
  // Every argument must outlive this.
  PushRefusals(const JobConfig& job, Outbox& outbox, const Membership& members,
               Enrollment& enrollment, CredentialBans& bans)
      : max_in_a_row_(job.max_refused_pushes),
        outbox_(outbox),
        members_(members),
        enrollment_(enrollment),
        bans_(bans) {}

  // Shard `shard` refused a push.
  void Handle(int shard, const wire::PushRefused& refused);

  // lockstep_rejected_pushes_total{worker,reason} lines,
  // lockstep_poisoning_workers_removed_total and the bans' lines.
  void AddMetrics(PrometheusText* text) const;
  uint64_t total() const { return total_; }
  uint64_t removed() const { return removed_; }

 private:
  const uint32_t max_in_a_row_;  // 0: never remove
  Outbox& outbox_;
  const Membership& members_;
  Enrollment& enrollment_;
  CredentialBans& bans_;
  std::map<std::pair<uint32_t, wire::RefusalReason>, uint64_t> counts_;
  uint64_t total_ = 0;
  uint64_t removed_ = 0;
};

// The metric label of a refusal's reason: "non_finite", "grad_norm",
// "impersonation", "duplicate", "clock_window", "batch", "fenced", "quota",
// "verdict" or "norm_outlier".
const char* RefusalLabel(wire::RefusalReason reason);

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_FAULTS_PUSH_REFUSALS_H_
