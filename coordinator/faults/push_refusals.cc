#include "coordinator/faults/push_refusals.h"

#include <sstream>

#include "common/logging.h"
#include "coordinator/state/run_recorder.h"

namespace lockstep {

const char* RefusalLabel(wire::RefusalReason reason) {
  switch (reason) {
    case wire::RefusalReason::GradNorm:
      return "grad_norm";
    case wire::RefusalReason::Impersonation:
      return "impersonation";
    case wire::RefusalReason::Duplicate:
      return "duplicate";
    case wire::RefusalReason::ClockWindow:
      return "clock_window";
    case wire::RefusalReason::Batch:
      return "batch";
    case wire::RefusalReason::Fenced:
      return "fenced";
    case wire::RefusalReason::Quota:
      return "quota";
    case wire::RefusalReason::Verdict:
      return "verdict";
    case wire::RefusalReason::NormOutlier:
      return "norm_outlier";
    default:
      return "non_finite";
  }
}

void PushRefusals::Handle(int shard, const wire::PushRefused& refused) {
  ++total_;
  ++counts_[{refused.worker(), refused.reason()}];
  if (max_in_a_row_ == 0 || refused.in_a_row() < max_in_a_row_) return;
  const std::optional<std::string> id =
      members_.WorkerOfRank(static_cast<int>(refused.worker()));
  if (!id) return;  // removed already (another shard's report)
  std::ostringstream why;
  why << "removed from the job: server " << shard << " refused "
      << refused.in_a_row() << " of its pushes in a row ("
      << RefusalLabel(refused.reason()) << ", last at clock " << refused.clock()
      << "; --max-refused-pushes " << max_in_a_row_ << ")";
  LS_LOG(Warning) << "worker " << refused.worker() << " " << why.str();
  ++removed_;
  bans_.Ban(members_.at(*id).credential,
            "worker " + std::to_string(refused.worker()) + " " + why.str());
  enrollment_.RemoveWorker(*id, why.str());
  outbox_.Send(*id, MakeShutdownHeader(wire::ShutdownKind::Removed, why.str()));
}

void PushRefusals::AddMetrics(PrometheusText* text) const {
  for (const auto& [key, count] : counts_) {
    text->Add("lockstep_rejected_pushes_total{worker=\"" +
                  std::to_string(key.first) + "\",reason=\"" +
                  RefusalLabel(key.second) + "\"}",
              static_cast<double>(count));
  }
  text->Add("lockstep_poisoning_workers_removed_total",
            static_cast<double>(removed_));
  bans_.AddMetrics(text);
}

}  // namespace lockstep
